"""Parity sweep over PyTorch's OpInfo database: every OpInfo, for float32,
bfloat16, int64 and bool where the CPU supports them, runs its sample inputs on
the CPU and on neuron and compares (bitwise: the same CPU kernel runs on
device memory). A pair passes when every sample matches, the outputs are
neuron tensors whose memory the neuron caching allocator handed out, the
copying fallback did not run, and the op's in-place variant (where it has one)
allocated no device memory beyond the temporaries its CPU kernel allocates.
Differentiable ops also get a "float32-backward" row: gradients of the inputs
for the same random output gradients, compared the same way.

Run: .venv/bin/python tests/sweep/opinfo_sweep.py [--max-samples N] [--ops a,b] [--out FILE]
Writes a table (op, dtype, result, reason) as TSV; prints the totals.
"""

import argparse
import signal
import sys
import time
import warnings
from pathlib import Path

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten

import torch_neuronx

DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.bool)
RANDOM_HINTS = (
    "rand",
    "fractional",
    "lowrank",
    "normal",
    "bernoulli",
    "dropout",
    "multinomial",
    "uniform",
    "exponential",
    "cauchy",
    "geometric",
    "log_normal",
    "poisson",
    "randperm",
    "empty",
    "new_empty",
    "multi_head_attention",
)  # its training samples apply dropout (p=0.5)


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def to_neuron(x):
    """The same tensor on neuron with the same layout: the whole storage is
    copied and the view rebuilt (offset, strides), so kernels see what they saw."""
    if not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.layout != torch.strided:
        return x.to("neuron") if isinstance(x, torch.Tensor) and x.device.type == "cpu" else x
    storage = (
        x.untyped_storage().to(device="neuron")
        if x.untyped_storage().nbytes()
        else torch.UntypedStorage(0, device="neuron")
    )
    out = torch.empty(0, dtype=x.dtype, device="neuron").set_(storage, x.storage_offset(), x.size(), x.stride())
    if x.is_conj():
        out = out.conj()
    if x.is_neg():
        out = out._neg_view()
    return out.requires_grad_(x.requires_grad) if x.is_leaf else out


def device_memory_problem(out) -> str | None:
    """None if every neuron tensor in out lives in memory of the neuron allocator."""
    leaves = tree_flatten(out)[0]
    leaves += [p for t in leaves if isinstance(t, torch.Tensor) and t.is_sparse for p in (t._indices(), t._values())]
    for t in leaves:
        if (
            isinstance(t, torch.Tensor)
            and t.device.type == "neuron"
            and t.layout == torch.strided
            and not t._is_zerotensor()
        ):  # zero tensors have no memory at all
            storage = t.untyped_storage()
            if storage.nbytes() and not torch_neuronx._C._allocator_owns(storage.data_ptr()):
                return "an output's memory does not come from the neuron allocator"
    return None


def allocations() -> int:
    return torch.neuron.memory_stats().get("allocation.all.allocated", 0)


def compare(cpu_out, dev_out, exact: bool) -> str | None:
    cpu_leaves, cpu_spec = tree_flatten(cpu_out)
    dev_leaves, dev_spec = tree_flatten(dev_out)
    if len(cpu_leaves) != len(dev_leaves):
        return f"output structure differs: {cpu_spec} vs {dev_spec}"
    for c, d in zip(cpu_leaves, dev_leaves):
        if isinstance(c, torch.Tensor):
            if not isinstance(d, torch.Tensor):
                return f"expected a tensor, got {type(d).__name__}"
            if d.device.type != "neuron" and c.device.type == "cpu":
                return f"output on {d.device}, not neuron"
            if c.shape != d.shape or c.dtype != d.dtype:
                return f"shape/dtype {tuple(d.shape)}/{d.dtype} vs cpu {tuple(c.shape)}/{c.dtype}"
            if c.layout != d.layout:
                return f"layout {d.layout} vs cpu {c.layout}"
            if c.layout != torch.strided:  # sparse: compared by value
                c, d = c.to_dense(), d.to_dense()
            if exact:
                dc = d.cpu()
                if c.dtype == torch.complex32:
                    c, dc = c.to(torch.complex64), dc.to(torch.complex64)
                if c.is_complex() or c.is_floating_point():
                    same = torch.equal(torch.nan_to_num(c), torch.nan_to_num(dc)) and torch.equal(c.isnan(), dc.isnan())
                else:
                    same = torch.equal(c, dc)
                if not same:
                    try:
                        torch.testing.assert_close(dc, c, equal_nan=True, check_device=False)
                    except AssertionError as e:
                        return "values differ from the CPU: " + str(e).splitlines()[0][:100]
                    return "close"
        elif exact and c != d and not (isinstance(c, float) and c != c and d != d):
            return f"value {d!r} vs cpu {c!r}"
    return None


# --staged: the device is not host-addressable; ops that took the copying
# fallback (expected there) are collected instead of failing their pair.
STAGED = False
STAGED_OPS: set[str] = set()


def run_pair(op, dtype, max_samples: int) -> tuple[str, str]:
    if dtype not in op.supported_dtypes("cpu"):
        return "skip", "dtype not supported on CPU"
    exact = not any(h in op.name for h in RANDOM_HINTS)
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:max_samples]
    except Exception as e:  # noqa: BLE001 - an OpInfo that cannot build samples
        return "skip", f"sample inputs fail on CPU: {type(e).__name__}"
    ran = close = 0
    for sample in samples:
        try:
            cpu_out = op(sample.input, *sample.args, **sample.kwargs)
        except Exception:  # noqa: BLE001 - the CPU itself rejects this sample
            continue
        dev_sample = sample.transform(to_neuron)
        if "device" in dev_sample.kwargs:  # factory functions: ask for neuron
            dev_sample.kwargs["device"] = "neuron"
        torch_neuronx.clear_op_tracking()
        try:
            dev_out = op(dev_sample.input, *dev_sample.args, **dev_sample.kwargs)
        except Exception as e:  # noqa: BLE001
            return "fail", f"raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        fallbacks = torch_neuronx.get_fallback_ops()
        STAGED_OPS.update(fallbacks)
        if fallbacks and not STAGED:
            return "fail", f"copying fallback ran: {sorted(fallbacks)}"
        problem = compare(cpu_out, dev_out, exact) or device_memory_problem(dev_out)
        if problem == "close":
            close += 1
        elif problem:
            return "fail", problem
        problem = check_inplace(op, sample, exact)
        if problem == "close":
            close += 1
        elif problem:
            return "fail", problem
        ran += 1
    if ran == 0:
        return "skip", "no sample runs on CPU"
    note = "" if exact else " (random op: shapes compared)"
    if close:
        note += f" ({close} within the dtype's tolerance, not bitwise)"
    return "pass", f"{ran} samples{note}"


def check_inplace(op, sample, exact: bool) -> str | None:
    """Runs op's in-place variant on a neuron copy of the sample: same result as
    on the CPU, and no device allocation beyond the temporaries the CPU kernel
    itself allocates (counted on the CPU run). None when it has none or the
    CPU rejects the sample."""
    inplace = op.get_inplace()
    if inplace is None:
        return None
    cpu_in = sample.input.clone()
    cpu_before = torch_neuronx._C._cpu_allocations()
    try:
        inplace(cpu_in, *sample.args, **sample.kwargs)
    except Exception:  # noqa: BLE001 - not valid in place for this sample (dtype, broadcast)
        return None
    cpu_allocated = torch_neuronx._C._cpu_allocations() - cpu_before
    dev_sample = sample.transform(to_neuron)
    dev_in = to_neuron(sample.input.clone())
    torch.neuron.synchronize()
    before = allocations()
    try:
        inplace(dev_in, *dev_sample.args, **dev_sample.kwargs)
    except Exception as e:  # noqa: BLE001
        return f"in-place variant raises {type(e).__name__}: {str(e).splitlines()[0][:140]}"
    allocated = allocations() - before
    problem = compare(cpu_in, dev_in, exact)
    if problem:
        return problem if problem == "close" else "in-place variant: " + problem
    if allocated > cpu_allocated and not STAGED:  # more than the CPU kernel's own temporaries
        return f"in-place variant allocated {allocated} device block(s), the CPU kernel {cpu_allocated}"
    return None


def grad_inputs(sample_args) -> list[torch.Tensor]:
    return [t for t in tree_flatten(sample_args)[0] if isinstance(t, torch.Tensor) and t.requires_grad]


def grads(op, sample, grad_outputs_like=None):
    out = op(sample.input, *sample.args, **sample.kwargs)
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    inputs = grad_inputs((sample.input, sample.args, sample.kwargs))
    if not outs or not inputs:
        return None, None
    if grad_outputs_like is None:
        gen = torch.Generator().manual_seed(0)
        grad_outputs_like = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in outs]
    g_out = [g.to(o.device) for g, o in zip(grad_outputs_like, outs)]
    return torch.autograd.grad(outs, inputs, g_out, allow_unused=True), grad_outputs_like


def run_backward(op, max_samples: int) -> tuple[str, str]:
    """Input gradients in float32, CPU against neuron, for one OpInfo."""
    if not op.supports_autograd or torch.float32 not in op.supported_dtypes("cpu"):
        return "skip", "not differentiable in float32 on CPU"
    if any(h in op.name for h in RANDOM_HINTS):
        return "skip", "random op: gradients depend on the random draw"
    try:
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=True))[:max_samples]
    except Exception as e:  # noqa: BLE001
        return "skip", f"sample inputs fail on CPU: {type(e).__name__}"
    ran = close = 0
    for sample in samples:
        try:
            cpu_grads, g_like = grads(op, sample)
        except Exception:  # noqa: BLE001 - the CPU itself cannot differentiate this sample
            continue
        if cpu_grads is None:
            continue
        dev_sample = sample.transform(to_neuron)
        if len(grad_inputs((dev_sample.input, dev_sample.args, dev_sample.kwargs))) != len(cpu_grads):
            continue  # an input that is not a leaf: moving it dropped its graph
        torch_neuronx.clear_op_tracking()
        try:
            dev_grads, _ = grads(op, dev_sample, g_like)
        except Exception as e:  # noqa: BLE001
            return "fail", f"backward raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        fallbacks = torch_neuronx.get_fallback_ops()
        STAGED_OPS.update(fallbacks)
        if fallbacks and not STAGED:
            return "fail", f"copying fallback ran in backward: {sorted(fallbacks)}"
        pairs = [(c, d) for c, d in zip(cpu_grads, dev_grads) if c is not None or d is not None]
        if any(c is None or d is None for c, d in pairs):
            return "fail", "a gradient is missing on one side"
        problem = compare([c for c, _ in pairs], [d for _, d in pairs], True) or device_memory_problem(dev_grads)
        if problem == "close":
            close += 1
        elif problem:
            return "fail", "gradients: " + problem
        ran += 1
    if ran == 0:
        return "skip", "no sample differentiates on CPU"
    return "pass", f"{ran} samples" + (f" ({close} within tolerance, not bitwise)" if close else "")


def _record(counts: dict, pairs: int, ran: int, args) -> None:
    """The sweep's totals for docs/figures.md (build/bench/opinfo_sweep.json)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from _figures import Table, report

    table = Table(
        "PyTorch's OpInfo database on neuron against the CPU",
        ["(op, dtype) pairs", "pass", "fail", "skip", "pass rate of the pairs that run on the CPU"],
        note=f"Forward in each dtype and float32 backward, up to {args.max_samples} samples per pair, "
        f"compared bitwise; the failures are in {args.out} and tests/sweep/expected_failures.tsv.",
    )
    table.add(pairs, counts["pass"], counts["fail"], counts["skip"], f"{counts['pass'] / max(ran, 1):.1%}")
    if args.figures and not args.ops and not args.staged:  # the whole database only
        report("opinfo_sweep", [table])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-samples", type=int, default=4)
    parser.add_argument("--ops", default="")
    parser.add_argument("--out", default="build/opinfo_sweep.tsv")
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--verbose", action="store_true", help="print each pair before it runs")
    parser.add_argument(
        "--figures", action="store_true", help="keep the totals for docs/figures.md (make sweep; not the tests' runs)"
    )
    parser.add_argument(
        "--staged",
        action="store_true",
        help="the device is not host-addressable (TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0): ops take "
        "the copying fallback by design; report the staged ops and copies instead of failing",
    )
    args = parser.parse_args()
    global STAGED
    STAGED = args.staged
    if STAGED:
        assert not torch_neuronx._C._host_addressable(0), "--staged needs TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0"
    wanted = set(filter(None, args.ops.split(",")))
    warnings.filterwarnings("ignore")
    torch_neuronx.set_fallback_warnings(False)
    signal.signal(signal.SIGALRM, _alarm)
    rows, counts = [], {"pass": 0, "fail": 0, "skip": 0}
    start = time.time()
    for op in op_db:
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if wanted and op.name not in wanted and name not in wanted:
            continue
        for dtype in (*DTYPES, "float32-backward"):
            if args.verbose:
                print(f"{name} {dtype}", file=sys.stderr, flush=True)
            signal.alarm(args.timeout)
            try:
                if dtype == "float32-backward":
                    result, reason = run_backward(op, args.max_samples)
                else:
                    result, reason = run_pair(op, dtype, args.max_samples)
            except Timeout:
                result, reason = "fail", f"timed out after {args.timeout} s"
            except Exception as e:  # noqa: BLE001 - the harness itself must not stop
                result, reason = "fail", f"harness error {type(e).__name__}: {str(e)[:120]}"
            finally:
                signal.alarm(0)
            counts[result] += 1
            rows.append((name, str(dtype).replace("torch.", ""), result, reason.replace("\t", " ")))
    with open(args.out, "w") as f:
        f.write("op\tdtype\tresult\treason\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    ran = counts["pass"] + counts["fail"]
    _record(counts, len(rows), ran, args)
    print(
        f"{len(rows)} (op, dtype) pairs from {len(op_db)} OpInfos in {time.time() - start:.0f} s: "
        f"{counts['pass']} pass, {counts['fail']} fail, {counts['skip']} skip; "
        f"pass rate {counts['pass'] / max(ran, 1):.1%} of the pairs that run on CPU; table in {args.out}"
    )
    if STAGED:
        stats = torch_neuronx.host_staging_stats()
        print(f"host-staged: {len(STAGED_OPS)} ops ran through the copying fallback; staged copies: {stats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
