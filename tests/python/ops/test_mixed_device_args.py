"""Which CPU tensors a neuron op accepts, as CUDA has it: CPU index tensors
and boolean masks in advanced indexing (read in place), 0-dim CPU tensors as
scalar inputs; never a CPU tensor as an in-place or out= argument."""

import pytest
import torch

import torch_neuronx


def test_cpu_long_index_and_mask_read_a_neuron_tensor():
    x = torch.arange(20.0).view(4, 5)
    d = x.to("neuron")
    idx, mask = torch.tensor([3, 0, 3]), x > 7.5
    for got, want in (
        (d[idx], x[idx]),
        (d[mask], x[mask]),
        (d[idx, 1:], x[idx, 1:]),
        (d[:, torch.tensor([4, 1])], x[:, torch.tensor([4, 1])]),
        (d[mask[:, 0]], x[mask[:, 0]]),
    ):
        assert got.device.type == "neuron"
        assert torch.equal(got.cpu(), want)
    assert torch_neuronx.get_fallback_ops() == {}


def test_index_assignment_with_cpu_indices():
    x = torch.zeros(6)
    d = x.to("neuron")
    d[torch.tensor([1, 4])] = 3.0
    d[torch.tensor([0, 2])] = torch.tensor([7.0, 8.0], device="neuron")
    d[torch.tensor([True, False, False, False, False, True])] = -1.0
    d.index_put_((torch.tensor([3, 3]),), torch.tensor([1.0, 2.0], device="neuron"), accumulate=True)
    assert torch.equal(d.cpu(), torch.tensor([-1.0, 3.0, 8.0, 3.0, 3.0, -1.0]))


def test_cpu_indices_under_autograd():
    x = torch.randn(5, 3, requires_grad=True)
    d = x.detach().to("neuron").requires_grad_()
    idx = torch.tensor([4, 4, 1])
    (x[idx] * 2).sum().backward()
    (d[idx] * 2).sum().backward()
    assert torch.equal(d.grad.cpu(), x.grad)


def test_neuron_indices_into_a_cpu_tensor_raise():
    with pytest.raises(RuntimeError, match="same device"):
        torch.arange(5.0)[torch.tensor([1], device="neuron")]


@pytest.mark.parametrize(
    "call, out_dtype",
    [
        (lambda d, out: torch.nonzero(d, out=out), torch.long),
        (lambda d, out: torch.add(d, d, out=out), torch.float),
        (lambda d, out: torch.sum(d, 0, out=out), torch.float),
        (lambda d, out: torch.amax(d, 0, out=out), torch.float),
        (lambda d, out: d.cpu().add_(d) if out is None else out.add_(d), torch.float),
    ],
    ids=["nonzero", "add", "sum", "amax", "cpu_add_"],
)
@pytest.mark.parametrize("shape", [(3,), ()], ids=["1-d", "0-d"])
def test_cpu_out_or_in_place_argument_raises(call, out_dtype, shape):
    d = torch.ones(shape, device="neuron")
    with pytest.raises(RuntimeError, match="same device|to have device neuron"):
        call(d, torch.empty(shape, dtype=out_dtype))


def test_cpu_scalar_inputs_still_allowed():
    d = torch.ones(3, device="neuron")
    assert torch.equal(torch.add(d, torch.tensor(2.0)).cpu(), torch.full((3,), 3.0))
    assert torch.equal(torch.where(d > 0, d, torch.tensor(0.0)).cpu(), torch.ones(3))
