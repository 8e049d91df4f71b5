"""How NKI kernels run: traced once per signature and replayed, on the
device memory of `neuron` tensors, on CPU tensors and NumPy arrays through
nki.simulate, with real fp8/bf16 rounding; every nki.isa instruction against
PyTorch; the `nki` import name and the cost estimate."""

import subprocess
import sys
import textwrap

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np
import pytest
import torch
from helpers.processes import worker_env

import torch_neuronx


@nki.jit
def scale_rows(x, factor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.load(x[i * 128 : (i + 1) * 128, :])
        nl.store(out[i * 128 : (i + 1) * 128, :], value=nl.multiply(t, factor))
    return out


def test_second_call_replays_the_plan_without_tracing():
    x = torch.randn(256, 64, device="neuron")
    before = scale_rows.trace_count
    y1 = scale_rows(x, 2.0)
    y2 = scale_rows(x * 3, 2.0)
    assert scale_rows.trace_count == before + 1, "the second call traced again"
    assert torch.equal(y1.cpu(), x.cpu() * 2) and torch.equal(y2.cpu(), x.cpu() * 6)
    scale_rows(x, 3.0)  # a new non-tensor value: a new signature
    scale_rows(torch.randn(384, 64, device="neuron"), 2.0)  # a new shape
    assert scale_rows.trace_count == before + 3


def test_a_kernel_keeps_its_most_recently_called_signatures():
    x = torch.randn(128, 8, device="neuron")
    limit = sys.modules["torch_neuronx.nki.jit"].MAX_SIGNATURES  # the module (nki.jit is the decorator)
    for f in range(limit + 4):  # as a test harness calls one kernel at many shapes
        scale_rows(x, float(f))
    assert len(scale_rows.plans) == limit
    before = scale_rows.trace_count
    scale_rows(x, float(limit + 3))  # recent: replayed
    assert scale_rows.trace_count == before
    assert torch.equal(scale_rows(x, 0.0).cpu(), x.cpu() * 0)  # evicted: traced again
    assert scale_rows.trace_count == before + 1


def test_kernel_reads_and_writes_device_memory_in_place():
    @nki.jit
    def add_one_in_place(x):
        t = nl.load(x)
        nl.store(x, value=nl.add(t, 1.0))

    x = torch.zeros(128, 32, device="neuron")
    view = x[:, :16]  # a strided view: the kernel writes through it into x's memory
    torch_neuronx.reset_host_staging_stats()
    add_one_in_place(view)
    assert torch.equal(x.cpu()[:, :16], torch.ones(128, 16)) and torch.equal(x.cpu()[:, 16:], torch.zeros(128, 16))
    assert torch_neuronx.host_staging_stats()["to_host_copies"] == 0
    out = scale_rows(x, 2.0)
    assert torch_neuronx._C._allocator_owns(out.data_ptr()), "outputs are neuron allocations"
    assert torch_neuronx.get_fallback_ops() == {}


def test_kernel_sees_work_queued_on_the_current_stream():
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        x = torch.full((128, 64), 3.0, device="neuron")
        x.mul_(2)
        y = scale_rows(x, 0.5)
    s.synchronize()
    assert torch.equal(y.cpu(), torch.full((128, 64), 3.0))


def test_simulate_runs_numpy_and_cpu_tensors():
    a = np.random.rand(128, 64).astype(np.float32)
    out = nki.simulate(scale_rows)(a, 2.0)
    assert isinstance(out, np.ndarray) and np.array_equal(out, a * 2)
    t = torch.rand(128, 64)
    assert torch.equal(nki.simulate(scale_rows)(t, 2.0), t * 2)
    assert torch.equal(torch.from_numpy(nki.simulate_kernel(scale_rows, a, 2.0)), torch.from_numpy(a * 2))
    with pytest.raises(nki.NKIError, match="CPU tensors or NumPy arrays"):
        nki.simulate(scale_rows)(t.neuron(), 2.0)


@pytest.mark.parametrize("dtype", [nl.float8_e4m3, nl.float8_e5m2, nl.bfloat16, nl.float16])
def test_low_precision_stores_round_like_pytorch(dtype):
    @nki.jit
    def cast(x, dt):
        out = nl.ndarray(x.shape, dtype=dt, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nl.load(x), dtype=dt))
        return out

    x = torch.randn(128, 256) * 4
    got = cast(x.neuron(), dtype).cpu()
    assert got.dtype == dtype
    want = x.to(dtype.torch)  # an nl dtype is a PyTorch dtype to the emulator
    assert torch.equal(
        got.view(torch.uint8) if got.element_size() == 1 else got,
        want.view(torch.uint8) if got.element_size() == 1 else want,
    )


def test_isa_instructions_against_pytorch():
    @nki.jit
    def isa_mix(x, w):
        out = nl.ndarray((128, 14), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)  # (128, 512)
        a = nisa.activation(op=nl.exp, data=t, scale=0.5, bias=nl.load(w))  # exp(0.5 t + w)
        red = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation_reduce(op=nl.tanh, data=t, reduce_op=nl.add, reduce_res=red)
        ts = nisa.tensor_scalar(data=t, op0=np.multiply, operand0=2.0, op1=np.add, operand1=1.0)
        tt = nisa.tensor_tensor(ts, a, op=nl.maximum)
        mx = nisa.tensor_reduce(np.max, data=tt, axis=(1,), keepdims=True, negate=True)
        stats = nisa.bn_stats(t)
        mv = nisa.bn_aggr(stats)
        io = nisa.iota(nl.arange(128)[:, None] * 2 + 5, dtype=nl.float32)
        ms = nisa.memset((128, 1), 7.0, nl.float32)
        cp = nisa.tensor_copy(t[:, 0:1])
        tr = nisa.nc_transpose(t[:, 0:128])  # (128, 128) in PSUM
        sel = nisa.affine_select(
            pred=(nl.arange(128)[:, None] >= nl.arange(128)[None, :]), on_true_tile=nl.copy(tr), on_false_value=0.0
        )
        stt = nisa.scalar_tensor_tensor(data=t[:, 0:1], op0=np.multiply, operand0=3.0, op1=np.add, operand1=cp)
        res = nl.ndarray((128, 14), dtype=nl.float32)
        for j, v in enumerate(
            [
                red,
                mx,
                mv[:, 0:1],
                mv[:, 1:2],
                io,
                ms,
                cp,
                stt,
                nl.sum(sel, axis=[1], keepdims=True),
                nl.sum(a, axis=[1], keepdims=True),
                nl.sum(ts, axis=[1], keepdims=True),
                nl.sum(tt, axis=[1], keepdims=True),
                nl.sum(tr, axis=[1], keepdims=True),
                nl.max(t, axis=[1], keepdims=True),
            ]
        ):
            nisa.tensor_copy(dst=res[:, j : j + 1], src=v)
        nisa.dma_copy(dst=out, src=res)
        return out

    torch.manual_seed(0)
    x, w = torch.randn(128, 512), torch.randn(128, 1)
    got = isa_mix(x.neuron(), w.neuron()).cpu()
    a = torch.exp(0.5 * x + w)
    ts = x * 2 + 1
    tt = torch.maximum(ts, a)
    tr = x[:, :128].t()
    ref = torch.stack(
        [
            torch.tanh(x).sum(1),
            -tt.amax(1),
            x.mean(1),
            x.var(1, unbiased=False),
            torch.arange(128) * 2.0 + 5,
            torch.full((128,), 7.0),
            x[:, 0],
            3 * x[:, 0] + x[:, 0],
            torch.tril(tr).sum(1),
            a.sum(1),
            ts.sum(1),
            tt.sum(1),
            tr.sum(1),
            x.amax(1),
        ],
        dim=1,
    )
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-4)


def test_new_style_matmul_accumulates_after_the_first_write():
    @nki.jit
    def mm(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)  # uninitialised: the first write overwrites
        for k in nl.affine_range(lhsT.shape[0] // 128):
            a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
            b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a, src=lhsT[k * 128 : (k + 1) * 128, :])
            nisa.dma_copy(dst=b, src=rhs[k * 128 : (k + 1) * 128, :])
            nisa.nc_matmul(acc, a, b)
        sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=sb, src=acc)
        nisa.dma_copy(dst=out, src=sb)
        return out

    lhsT, rhs = torch.randn(384, 128), torch.randn(384, 512)
    torch.testing.assert_close(mm(lhsT.neuron(), rhs.neuron()).cpu(), lhsT.T @ rhs, rtol=1e-5, atol=1e-4)


def test_estimate_names_engines_and_bottleneck():
    @nki.jit
    def fp32_matmul(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        a = nl.load(lhsT)
        b = nl.load(rhs)
        for _ in nl.affine_range(64):  # reuse the loaded tiles: Tensor-engine bound
            acc += nl.matmul(a, b, transpose_x=True)
        nl.store(out, value=nl.copy(acc))
        return out

    fp32_matmul(torch.zeros(128, 128, device="meta"), torch.zeros(128, 512, device="meta"))  # meta: trace only
    e = torch_neuronx.nki.last_estimate()
    assert e.bottleneck == "tensor" and e.instructions["tensor"] == 64
    # 64 fp32 matmuls of 512 moving columns at 4 cycles each, 2.4 GHz
    assert e.engine_us["tensor"] == pytest.approx(64 * 512 * 4 / 2.4e9 * 1e6)
    assert e.total_us >= e.engine_us["tensor"] and "tensor" in str(e)
    scale_rows(torch.zeros(1024, 2048, device="meta"), 2.0)
    assert torch_neuronx.nki.last_estimate().bottleneck == "dma"


def _run(code, tmp_path, **extra_env):
    env = worker_env(PYTHONPATH=str(tmp_path), **extra_env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_import_nki_is_ours_even_with_a_placeholder_nki_package_installed(tmp_path):
    (tmp_path / "nki").mkdir()
    (tmp_path / "nki" / "__init__.py").write_text('"""A placeholder package named nki."""\n__version__ = "0.0.1"\n')
    r = _run(
        """
        import nki, nki.language as nl, nki.isa as nisa
        assert nki.__name__ == "torch_neuronx.nki", nki.__name__
        assert callable(nki.jit) and hasattr(nl, "tile_size") and hasattr(nisa, "nc_matmul")
        import torch_neuronx
        assert torch_neuronx.nki is nki
        print("ours")
    """,
        tmp_path,
    )
    assert r.returncode == 0 and "ours" in r.stdout, r.stderr


def test_import_nki_steps_aside_for_awss_package(tmp_path):
    pkg = tmp_path / "nki"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def jit(fn=None, **kw):\n    return fn\nAWS = True\n")
    (pkg / "isa.py").write_text("def nc_matmul(*a, **k): pass\n")
    (pkg / "language.py").write_text("ndarray = None\n")
    r = _run(
        """
        import nki
        assert getattr(nki, "AWS", False), nki.__file__
        import torch_neuronx
        from torch_neuronx import nki as ours
        assert ours.__name__ == "torch_neuronx.nki" and ours is not nki
        print("aws")
    """,
        tmp_path,
    )
    assert r.returncode == 0 and "aws" in r.stdout, r.stderr


def test_grid_loops_ds_and_hbm_scratch():
    @nki.jit
    def k(x):
        out = nl.ndarray((nl.num_programs(0) * 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        scratch = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.private_hbm)
        p = nl.program_id(0)
        acc = nl.zeros((128, 64), dtype=nl.float32)
        for j in nl.static_range(2):
            acc += nl.load(x[nl.ds(p * 128, 128), nl.ds(j * 64, 64)])
        nl.store(scratch, value=acc)  # round trip through HBM scratch
        back = nl.load(scratch)
        nl.store(out[nl.ds(p * 128, 128), :], value=nl.multiply(back, float(nl.program_ndim())))
        return out

    x = torch.randn(384, 128)
    got = k[3](x.neuron()).cpu()
    torch.testing.assert_close(got, x[:, :64] + x[:, 64:])


def test_kernels_run_where_the_host_cannot_address_device_memory():
    from helpers.processes import run_ok

    assert "nki round trip ok" in run_ok("host_staged", "nki_kernel_round_trip", timeout=120)


@pytest.mark.parametrize("call", ["dropout", "rand", "isa"])
def test_unsupported_parts_say_so(call):
    @nki.jit
    def k(x):
        t = nl.load(x)
        if call == "dropout":
            nl.dropout(t, 0.1)
        elif call == "rand":
            nl.rand((128, 4), dtype=nl.float32)
        else:
            nisa.activate2(t, t)  # an instruction of AWS's API the emulator does not run yet

    with pytest.raises(nki.NKIError, match="not supported"):
        k(torch.zeros(128, 4, device="neuron"))


@nki.jit
def row_sums_in_nested_loops(x):
    """A masked tail reduced to rank 1, inside loops that start back to back
    (the outer and inner loop records once compared equal)."""
    rows, n = x.shape
    out = nl.ndarray((rows, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    for i in nl.affine_range((rows + 127) // 128):
        for j in nl.affine_range(1):
            live = i * 128 + ip < rows
            t = nl.load(x[i * 128 + ip, j * n + nl.arange(n)[None, :]], mask=live)
            s = nl.sum(t, axis=[1], mask=live)
            nl.store(out[i * 128 + ip, nl.arange(1)[None, :]], value=s, mask=live)
    return out


def test_masked_tail_reduction_in_nested_loops():
    x = torch.randn(200, 16, device="neuron")
    torch.testing.assert_close(row_sums_in_nested_loops(x).cpu()[:, 0], x.cpu().sum(1))


def test_a_masked_tail_costs_only_its_rows():
    # one live row of a 128-row tile moves one row, not 128 (an engine's time
    # per instruction stays: it is per partition lane)
    one = torch.randn(1, 512, device="neuron")
    full = torch.randn(128, 512, device="neuron")
    row_sums_in_nested_loops(one)
    e1 = torch_neuronx.nki.last_estimate()
    row_sums_in_nested_loops(full)
    e128 = torch_neuronx.nki.last_estimate()
    assert e1.dma_bytes * 100 < e128.dma_bytes
    assert e1.engine_us["vector"] == e128.engine_us["vector"] and e1.total_us < e128.total_us


def test_output_elements_a_kernel_never_writes_hold_sentinels():
    @nki.jit
    def half(x, n):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x[0:n, :])
        nl.store(out[0:n, :], value=t)
        return out

    x = torch.randn(8, 4)
    got = half(x.neuron(), 3).cpu()
    assert torch.equal(got[:3], x[:3]) and bool(got[3:].isnan().all())
    ints = half(torch.arange(32, dtype=torch.int32).reshape(8, 4).neuron(), 3).cpu()
    assert bool((ints[3:] == torch.iinfo(torch.int32).min).all())
