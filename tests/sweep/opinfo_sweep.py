"""Parity sweep over PyTorch's OpInfo database: every OpInfo, for float32,
bfloat16, int64 and bool where the CPU supports them, runs its sample inputs on
the CPU and on neuron and compares (bitwise: the same CPU kernel runs on
device memory). A pair passes when every sample matches, the outputs are
neuron tensors, and the copying fallback did not run.

Run: .venv/bin/python tests/sweep/opinfo_sweep.py [--max-samples N] [--ops a,b] [--out FILE]
Writes a table (op, dtype, result, reason) as TSV; prints the totals.
"""

import argparse
import signal
import sys
import time
import warnings

import torch
import torch_neuronx
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten, tree_map

DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.bool)
RANDOM_HINTS = ("rand", "fractional", "lowrank", "normal", "bernoulli", "dropout", "multinomial", "uniform", "exponential", "cauchy",
                "geometric", "log_normal", "poisson", "randperm", "empty", "new_empty")


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def to_neuron(x):
    """The same tensor on neuron with the same layout: the whole storage is
    copied and the view rebuilt (offset, strides), so kernels see what they saw."""
    if not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.layout != torch.strided:
        return x.to("neuron") if isinstance(x, torch.Tensor) and x.device.type == "cpu" else x
    storage = x.untyped_storage().to(device="neuron") if x.untyped_storage().nbytes() else torch.UntypedStorage(0, device="neuron")
    out = torch.empty(0, dtype=x.dtype, device="neuron").set_(storage, x.storage_offset(), x.size(), x.stride())
    if x.is_conj():
        out = out.conj()
    if x.is_neg():
        out = out._neg_view()
    return out.requires_grad_(x.requires_grad) if x.is_leaf else out


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
        if fallbacks:
            return "fail", f"copying fallback ran: {sorted(fallbacks)}"
        problem = compare(cpu_out, dev_out, exact)
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-samples", type=int, default=4)
    parser.add_argument("--ops", default="")
    parser.add_argument("--out", default="build/opinfo_sweep.tsv")
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--verbose", action="store_true", help="print each pair before it runs")
    args = parser.parse_args()
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
        for dtype in DTYPES:
            if args.verbose:
                print(f"{name} {dtype}", file=sys.stderr, flush=True)
            signal.alarm(args.timeout)
            try:
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
    print(f"{len(rows)} (op, dtype) pairs from {len(op_db)} OpInfos in {time.time() - start:.0f} s: "
          f"{counts['pass']} pass, {counts['fail']} fail, {counts['skip']} skip; "
          f"pass rate {counts['pass'] / max(ran, 1):.1%} of the pairs that run on CPU; table in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
