"""The counted copying CPU fallback (the path when zero-copy is off, and for
ops listed as copying) and op tracking."""

import warnings

import pytest
import torch

import torch_neuronx
from torch_neuronx import _C


@pytest.fixture(autouse=True)
def copying_fallback():
    _C._set_zero_copy(False)
    yield
    _C._set_zero_copy(True)


def test_fallback_is_counted_and_correct():
    a = torch.arange(6.0).to("neuron")
    b = (a * 2 + 1).cpu()
    assert torch.equal(b, torch.arange(6.0) * 2 + 1)
    ops = torch_neuronx.get_fallback_ops()
    mul = [k for k in ops if k.startswith("aten::mul")]
    assert mul and any(k.startswith("aten::add") for k in ops)
    executed = torch_neuronx.get_executed_ops()
    assert executed.get("aten::empty.memory_format", 0) + executed.get("aten::empty_strided", 0) >= 1  # arange
    assert executed["aten::_copy_from"] >= 2
    assert executed[mul[0]] == ops[mul[0]]


def test_warns_once_per_op_and_can_be_silenced():
    x = torch.ones(4, device="neuron")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cos(x)
        torch.cos(x)
    msgs = [str(w.message) for w in caught if "aten::cos" in str(w.message)]
    assert len(msgs) == 1 and "runs on the CPU with copies" in msgs[0]
    torch_neuronx.clear_op_tracking()
    torch_neuronx.set_fallback_warnings(False)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cos(x)
        assert not [w for w in caught if "aten::cos" in str(w.message)]
        assert sum(v for k, v in torch_neuronx.get_fallback_ops().items() if k.startswith("aten::cos")) == 1
    finally:
        torch_neuronx.set_fallback_warnings(True)


def test_native_ops_never_take_the_fallback():
    x = torch.empty(4, 4, device="neuron")
    x.fill_(3)
    y = x.view(16)[2:6].as_strided((2,), (2,))
    x.zero_()
    assert y.cpu().tolist() == [0.0, 0.0]
    assert torch_neuronx.get_fallback_ops() == {}


def test_in_place_and_out_through_fallback_write_device_memory():
    x = torch.ones(5, device="neuron")
    view = x[1:3]
    view.mul_(4)  # in place on a view, through the fallback
    assert x.cpu().tolist() == [1.0, 4.0, 4.0, 1.0, 1.0]
    out = torch.empty(2, device="neuron")
    torch.add(view, 1, out=out)
    assert out.cpu().tolist() == [5.0, 5.0] and out.device.type == "neuron"


def test_autograd_through_fallback_gives_neuron_grads():
    w = torch.randn(3, 3, device="neuron", requires_grad=True)
    x = torch.randn(2, 3, device="neuron")
    loss = (x @ w).tanh().sum()
    loss.backward()
    assert w.grad.device.type == "neuron"
    wc = w.detach().cpu().requires_grad_()
    (x.cpu() @ wc).tanh().sum().backward()
    assert torch.allclose(w.grad.cpu(), wc.grad)
