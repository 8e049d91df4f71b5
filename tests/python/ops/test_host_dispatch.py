"""Zero-copy host dispatch: ops without a neuron kernel run ATen's CPU kernels
directly on device memory. Checks that nothing is copied (the fallback
counter stays at zero), that outputs live in neuron memory from the neuron
allocator, that in-place ops allocate nothing, and that views stay views."""

import pytest
import torch
from helpers.processes import run_ok

import torch_neuronx


def allocations() -> int:
    return torch.neuron.memory_stats()["allocation.all.allocated"]


def test_ops_run_without_copies():
    x = torch.randn(8, 8)
    d = x.to("neuron")
    results = [d * 2 + 1, d.softmax(-1), d @ d, d.sum(0), torch.where(d > 0, d, -d), d.sort(-1).values]
    expected = [x * 2 + 1, x.softmax(-1), x @ x, x.sum(0), torch.where(x > 0, x, -x), x.sort(-1).values]
    for r, e in zip(results, expected):
        assert r.device.type == "neuron"
        assert torch.equal(r.cpu(), e)  # the same CPU kernel ran: bitwise equal
    assert torch_neuronx.get_fallback_ops() == {}
    executed = torch_neuronx.get_executed_ops()
    assert any(k.startswith("aten::mul") for k in executed) and any(k.startswith("aten::mm") for k in executed)


def test_outputs_come_from_the_neuron_allocator():
    d = torch.ones(1 << 20, device="neuron")
    before = torch.neuron.memory_allocated()
    out = d * 3
    assert torch.neuron.memory_allocated() - before == out.nbytes
    assert out.untyped_storage().device.type == "neuron"


def test_in_place_ops_allocate_nothing():
    d = torch.ones(1000, device="neuron")
    other = torch.full((1000,), 2.0, device="neuron")
    start = allocations()
    d.mul_(other)
    d.add_(other, alpha=0.5)  # (a Python float would be cast in a temporary, as on the CPU)
    d.clamp_(max=3)
    assert allocations() == start
    assert d[0].item() == 3.0


def test_out_variants_resize_like_on_cpu():
    a = torch.arange(6.0, device="neuron")
    out = torch.empty(0, device="neuron")
    torch.mul(a, 2, out=out)
    assert out.shape == (6,) and out.cpu().tolist() == [0, 2, 4, 6, 8, 10]
    wrong = torch.empty(2, 2, device="neuron")
    with pytest.warns(UserWarning, match="resized"):
        torch.add(a, 1, out=wrong)
    assert wrong.shape == (6,) and wrong.device.type == "neuron"


def test_views_stay_views():
    base = torch.zeros(4, 4, device="neuron")
    real = torch.view_as_real(torch.zeros(3, dtype=torch.complex64, device="neuron"))
    assert real.shape == (3, 2)
    diag = base.diagonal()
    diag.add_(1)
    assert base.cpu().trace().item() == 4
    u = base.unfold(0, 2, 2)
    assert u.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


def test_non_contiguous_zero_size_and_zero_dim():
    x = torch.randn(5, 7)
    d = x.to("neuron")
    assert torch.equal((d.t() * 2).cpu(), x.t() * 2)
    assert torch.equal(d[:, ::2].exp().cpu(), x[:, ::2].exp())
    e = torch.empty(0, 3, device="neuron")
    assert (e + 1).shape == (0, 3)
    s = torch.tensor(3.0, device="neuron")
    assert (s * s).item() == 9.0 and (s * s).dim() == 0


def test_data_dependent_shapes_and_host_reads():
    d = torch.tensor([0, 3, 0, 5, 1], device="neuron")
    assert d.nonzero().flatten().tolist() == [1, 3, 4]
    assert d[d > 0].tolist() == [3, 5, 1]
    assert torch.unique(d).tolist() == [0, 1, 3, 5]
    assert torch.masked_select(d, d > 2).tolist() == [3, 5]
    assert d.max().item() == 5


def test_factories_land_on_neuron():
    for t in (
        torch.arange(4, device="neuron"),
        torch.linspace(0, 1, 5, device="neuron"),
        torch.eye(3, device="neuron"),
        torch.randperm(6, device="neuron"),
    ):
        assert t.device.type == "neuron"
    assert torch_neuronx.get_fallback_ops() == {}


def test_inputs_sharing_storage_keep_cpu_overlap_checks():
    d = torch.arange(6.0, device="neuron")
    with pytest.raises(RuntimeError, match="memory location"):
        torch.add(d[:4], 1, out=d[2:])


def test_autograd_and_multiple_devices():
    w = torch.randn(4, 4, device="neuron:1", requires_grad=True)
    x = torch.randn(2, 4, device="neuron:1")
    (x @ w).relu().sum().backward()
    assert w.grad.device == torch.device("neuron", 1)
    wc = w.detach().cpu().requires_grad_()
    (x.cpu() @ wc).relu().sum().backward()
    assert torch.equal(w.grad.cpu(), wc.grad)
    assert torch_neuronx.get_fallback_ops() == {}


def test_zero_copy_can_be_turned_off_for_comparison():
    from torch_neuronx import _C

    _C._set_zero_copy(False)
    try:
        (torch.ones(3, device="neuron") * 2).cpu()
        assert sum(v for k, v in torch_neuronx.get_fallback_ops().items() if k.startswith("aten::mul")) == 1
    finally:
        _C._set_zero_copy(True)
    assert _C._zero_copy_enabled()


def test_data_dependent_ops_wait_for_queued_copies_in_thread_mode():
    run_ok(
        "host_dispatch_waits_for_copies",
        env={"TORCH_NEURONX_EMU_QUEUE": "thread"},
    )


def test_histc_counts_integer_inputs_as_cuda_does():
    # Transformers' MoE routing calls histc on int32 on every device but the CPU and MPS.
    x = torch.tensor([0, 1, 1, 3, 3, 3, 7], dtype=torch.int32)
    out = torch.histc(x.to("neuron"), bins=4, min=0, max=3)
    assert out.device.type == "neuron" and out.dtype == torch.int32
    assert out.cpu().tolist() == [1, 2, 0, 3]  # 7 is outside [0, 3]: not counted
    f = torch.randn(100)
    assert torch.equal(torch.histc(f.to("neuron"), bins=7).cpu(), torch.histc(f, bins=7))


def test_lazily_conjugated_and_negated_outputs_keep_their_bits():
    # A CPU kernel may return a lazy .conj() or ._neg_view() of its result
    # (vdot with a conjugated argument does); the neuron output keeps the bit.
    torch.manual_seed(0)
    v, w = torch.randn(6, dtype=torch.cfloat), torch.randn(6, dtype=torch.cfloat)
    vd, wd = v.to("neuron"), w.to("neuron")
    for got, want in (
        (torch.vdot(vd, wd.conj()), torch.vdot(v, w.conj())),
        (torch.vdot(vd.conj(), wd.conj()), torch.vdot(v.conj(), w.conj())),
        (torch.vdot(vd, (-wd).conj()), torch.vdot(v, (-w).conj())),
    ):
        assert torch.equal(got.cpu(), want)
    a, b = torch.randn(2, 4, 4, dtype=torch.cdouble), torch.randn(2, 3, 4, dtype=torch.cdouble)
    lu, piv = torch.linalg.lu_factor(a)
    for adjoint in (False, True):
        want = torch.linalg.lu_solve(lu, piv, b, left=False, adjoint=adjoint)
        got = torch.linalg.lu_solve(lu.to("neuron"), piv.to("neuron"), b.to("neuron"), left=False, adjoint=adjoint)
        torch.testing.assert_close(got.cpu(), want)
    assert torch_neuronx.get_fallback_ops() == {}


# make test runs torch single-threaded (OMP_NUM_THREADS=1, leaving the cores to
# the tests' ranks); a user's torch splits large ops over several threads. The
# CPU kernels run on device memory with two intra-op threads here and equal
# the CPU's, so a kernel that is wrong only when split still fails a test.
@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_large_ops_split_over_two_threads_equal_the_cpu(two_threads):
    assert torch.get_num_threads() == 2
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(512, 512, generator=g), torch.randn(512, 512, generator=g)
    x = torch.randn(1 << 20, generator=g)
    ops = {
        "add": lambda a, b, x: a + b,
        "matmul": lambda a, b, x: a @ b,
        "softmax": lambda a, b, x: torch.softmax(a, dim=1),
        "sum": lambda a, b, x: x.sum(),
        "cumsum": lambda a, b, x: x.cumsum(0),
        "sort": lambda a, b, x: x.sort().values,
    }
    for name, op in ops.items():
        got = op(a.to("neuron"), b.to("neuron"), x.to("neuron")).cpu()
        torch.testing.assert_close(got, op(a, b, x), rtol=0, atol=0, msg=lambda m, name=name: f"{name}: {m}")
