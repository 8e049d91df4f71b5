"""The native structured kernels (csrc/ops/NeuronStructuredOps.cpp): the
meta function on neuron tensors, outputs from the neuron allocator, the CPU
kernel on device memory. Each case is checked bitwise against the CPU and by
the counters: the native kernel ran (its family counter moved), or, for calls
the CPU kernel cannot take as they are, the host dispatch ran instead; never
the copying fallback."""

import pytest
import torch
from helpers.processes import run_ok

import torch_neuronx


def native_count(family: str) -> int:
    return torch_neuronx.get_executed_ops().get(family, 0)


def same(dev: torch.Tensor, ref: torch.Tensor) -> None:
    assert dev.device.type == "neuron" and ref.device.type == "cpu"
    assert dev.dtype == ref.dtype and dev.shape == ref.shape and dev.stride() == ref.stride()
    assert torch.equal(dev.cpu(), ref)


CASES = [
    ("aten::add", lambda x, y: x + y),
    ("aten::add", lambda x, y: torch.add(x, y, alpha=3)),
    ("aten::sub", lambda x, y: x - y),
    ("aten::mul", lambda x, y: x * y),
    ("aten::div", lambda x, y: x / y),
    ("aten::maximum", torch.maximum),
    ("aten::mm", lambda x, y: x @ y),
    ("aten::addmm", lambda x, y: torch.addmm(x, x, y, beta=0.5)),
    ("aten::exp", lambda x, y: x.exp()),
    ("aten::rsqrt", lambda x, y: x.abs().rsqrt()),
    ("aten::silu", lambda x, y: torch.nn.functional.silu(x)),
    ("aten::pow", lambda x, y: x.pow(2)),
    ("aten::sum", lambda x, y: x.sum(dim=1, keepdim=True)),
    ("aten::_softmax", lambda x, y: x.softmax(-1)),
    ("aten::_log_softmax", lambda x, y: x.log_softmax(0)),
]


@pytest.mark.parametrize("family,fn", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_functional_matches_cpu_on_the_native_path(family, fn, layout):
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    if layout == "transposed":
        x, y = x.t(), y.t()
    before = native_count(family)
    same(fn(x.to("neuron"), y.to("neuron")), fn(x, y))
    assert native_count(family) > before
    assert torch_neuronx.get_fallback_ops() == {}


def test_in_place_through_a_view_allocates_nothing_and_writes_the_base():
    base_c = torch.randn(4, 6)
    base_d = base_c.to("neuron")
    torch.neuron.synchronize()
    allocated = torch.neuron.memory_allocated()
    base_d[:, 1].mul_(2).add_(1)
    base_c[:, 1].mul_(2).add_(1)
    assert torch.neuron.memory_allocated() == allocated
    same(base_d, base_c)
    assert native_count("aten::mul") == 1 and native_count("aten::add") == 1


def test_out_with_the_wrong_size_is_resized_as_on_cpu():
    a, b = torch.randn(5), torch.randn(5)
    out_c, out_d = torch.empty(2), torch.empty(2, device="neuron")
    with pytest.warns(UserWarning, match="resized"):
        torch.mul(a.to("neuron"), b.to("neuron"), out=out_d)
    with pytest.warns(UserWarning, match="resized"):
        torch.mul(a, b, out=out_c)
    same(out_d, out_c)


def test_out_with_the_wrong_dtype_raises_as_on_cpu():
    a = torch.randn(3, device="neuron")
    with pytest.raises(RuntimeError, match="Long"):
        torch.add(a, a, out=torch.empty(3, dtype=torch.long, device="neuron"))


def test_python_and_cpu_scalars_stay_on_the_native_path():
    x = torch.randn(16)
    d = x.to("neuron")
    same(d * 0.5, x * 0.5)
    same(d + 2, x + 2)
    same(d * torch.tensor(3.0), x * torch.tensor(3.0))
    same(torch.tensor(2.0) - d, torch.tensor(2.0) - x)
    assert native_count("aten::mul") == 2 and native_count("aten::add") == 1 and native_count("aten::sub") == 1


def test_mixed_dtypes_take_the_host_dispatch_with_cpu_results():
    f, i = torch.randn(6), torch.arange(6)
    fd, id_ = f.to("neuron"), i.to("neuron")
    same(fd + id_, f + i)
    same(id_ / (id_ + 1), i / (i + 1))  # integer true division gives floats
    same(id_.exp(), i.exp())
    assert native_count("aten::div") == 0
    assert torch_neuronx.get_executed_ops().get("aten::div.Tensor", 0) == 1  # host dispatch counter
    assert torch_neuronx.get_fallback_ops() == {}


def test_zero_size_and_zero_dim():
    e = torch.empty(0, 3)
    same(e.to("neuron") + 1, e + 1)
    s = torch.tensor(1.5)
    same(s.to("neuron") * s.to("neuron"), s * s)
    same(torch.mm(torch.empty(0, 4).to("neuron"), torch.empty(4, 2).to("neuron")), torch.empty(0, 2))


def test_outputs_land_on_the_inputs_device():
    a = torch.randn(4, 4, device="neuron:1")
    assert torch.neuron.current_device() == 0
    assert (a + a).device == torch.device("neuron", 1)
    assert (a @ a).device == torch.device("neuron", 1)


def test_mixed_devices_raise_pytorchs_error():
    a = torch.randn(3, 3, device="neuron")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + torch.randn(3, 3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a @ torch.randn(3, 3, device="neuron:1")


def test_native_kernels_wait_for_queued_work_in_thread_mode():
    run_ok(
        "structured_waits_for_copies",
        env={"TORCH_NEURONX_EMU_QUEUE": "thread"},
    )


def test_reduced_precision_batched_matmuls_leave_onednn_on():
    """bf16 / half bmm and baddbmm take the host dispatch: on device memory the
    CPU kernel's oneDNN attempt failed, warned, and turned oneDNN off for the
    whole process (CPU ops included). A new interpreter, so that no earlier
    test decides the flag."""
    out = run_ok("structured_bf16_bmm_onednn")
    assert "onednn on" in out
