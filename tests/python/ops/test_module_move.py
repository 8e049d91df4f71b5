"""Moving modules and parameters between the CPU and neuron keeps their
identity, as on CUDA: `Module.to("neuron")` swaps each parameter's data, so an
optimizer, a hook or a lazy module built before the move still holds the
parameters that train (the `_has_compatible_shallow_copy_type` override)."""

import copy

import pytest
import torch
import torch.nn as nn


def test_cpu_and_neuron_tensors_are_shallow_copy_compatible():
    cpu, dev = torch.zeros(2), torch.zeros(2, device="neuron")
    assert torch._has_compatible_shallow_copy_type(cpu, dev)
    assert torch._has_compatible_shallow_copy_type(dev, cpu)
    assert torch._has_compatible_shallow_copy_type(dev, torch.zeros(3, device="neuron"))
    # Layouts and meta stay apart, as c10 has them for CUDA.
    assert not torch._has_compatible_shallow_copy_type(dev, torch.zeros(2, device="meta"))
    assert not torch._has_compatible_shallow_copy_type(dev, torch.zeros(2).to_sparse())


def test_module_to_keeps_parameter_objects_both_ways():
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    params = list(m.parameters())
    m.to("neuron")
    assert all(p is q for p, q in zip(params, m.parameters()))
    assert all(p.device.type == "neuron" for p in m.parameters())
    assert m[1].running_mean.device.type == "neuron"
    m.cpu()
    assert all(p is q for p, q in zip(params, m.parameters()))
    assert all(p.device.type == "cpu" for p in m.parameters())


def test_set_data_across_devices():
    p = nn.Parameter(torch.zeros(3))
    p.data = torch.ones(3, device="neuron")
    assert p.device.type == "neuron" and isinstance(p, nn.Parameter) and p.requires_grad
    assert torch.equal(p.cpu(), torch.ones(3))
    p.data = torch.full((3,), 2.0)
    assert p.device.type == "cpu"


def test_optimizer_built_before_the_move_trains():
    torch.manual_seed(0)
    ref = nn.Linear(8, 1)
    m = copy.deepcopy(ref)
    initial = ref.weight.detach().clone()
    opt = torch.optim.AdamW(m.parameters(), lr=0.1)
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=0.1)
    m.to("neuron")
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for _ in range(3):
        for model, o, dev in ((m, opt, "neuron"), (ref, opt_ref, "cpu")):
            o.zero_grad()
            nn.functional.mse_loss(model(x.to(dev)), y.to(dev)).backward()
            o.step()
    assert m.weight.device.type == "neuron"
    torch.testing.assert_close(m.weight.cpu(), ref.weight, rtol=1e-5, atol=1e-6)
    assert not torch.equal(m.weight.detach().cpu(), initial)  # the optimizer's parameters are the module's


def test_gradients_move_with_their_parameters():
    m = nn.Linear(3, 2)
    m(torch.randn(4, 3)).sum().backward()
    grad = m.weight.grad.clone()
    m.to("neuron")
    assert m.weight.grad.device.type == "neuron"
    assert torch.equal(m.weight.grad.cpu(), grad)


@pytest.mark.parametrize(
    "make",
    [lambda: nn.LazyLinear(5), lambda: nn.LazyConv2d(4, 3), lambda: nn.LazyBatchNorm1d()],
    ids=["LazyLinear", "LazyConv2d", "LazyBatchNorm1d"],
)
def test_lazy_modules_initialise_on_neuron(make):
    m = make().to("neuron")
    shape = {nn.LazyLinear: (2, 7), nn.LazyConv2d: (1, 2, 8, 8), nn.LazyBatchNorm1d: (4, 6)}[type(m)]
    y = m(torch.randn(shape, device="neuron"))
    assert y.device.type == "neuron"
    assert m.weight.numel() > 0 and m.weight.device.type == "neuron"
    assert type(m.weight) is nn.Parameter
