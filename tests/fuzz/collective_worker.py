"""One rank of the collective-sequence fuzzer (test_collective_sequences.py):
a long-lived member of a "cpu:gloo,neuron:neuron" group that runs sequences
seed, seed+1, ... (argv: first seed, count; or the seeds listed in
FUZZ_COLLECTIVE_SEEDS, and of those only the steps in
FUZZ_COLLECTIVE_STEPS). Each step of a sequence is made twice, with CPU
tensors (gloo, the reference) and with neuron tensors; at the end of the
sequence every buffer must match bitwise, refused calls must be refused by
both, and neuron's allocated memory must be back where it started.

Prints one "MISMATCH ..." line per difference (the run goes on) and a final
"STATS {json}" line; exits 1 after a mismatch or an unexpected exception
(then the group may be broken, so the run stops there)."""

import faulthandler
import json
import os
import sys
import traceback
from collections import Counter

import torch
import torch.distributed as dist
from collective_calls import issue, issue_bad
from collective_steps import draw_sequence
from helpers.rank import RANK, WORLD, init

import torch_neuronx  # noqa: F401  (registers the neuron device and backend)

# Shrinking by hand: FUZZ_COLLECTIVE_STEPS=0,3 runs only those steps of each sequence.
KEEP_STEPS = {int(x) for x in os.environ.get("FUZZ_COLLECTIVE_STEPS", "").split(",") if x}
HANG_S = 120  # no sequence takes a second; a collective's own timeout is FUZZ_COLLECTIVE_TIMEOUT (60 s)
SUBGROUPS = {2: [[0], [1], [0, 1]], 3: [[0, 1], [1, 2], [0, 2], [0, 1, 2]]}


def make_groups():
    """The drawable groups (name -> ranks), this rank's process groups, and
    their gloo-only twins (same ranks), on which gloo's half of each bad call
    is made. gloo's barrier waits on every work its worker threads still hold
    and rethrows a failed one's error (ProcessGroupGloo::barrier snapshots
    workInProgress_), so a call gloo has just refused could fail the next
    barrier on its group, or not, by when the worker thread lets go of it:
    the reference would then diverge across ranks. Neuron's half of a bad
    call stays on the group itself, which must go on working after it.
    Every rank creates every subgroup, in the same order (new_group's rule)."""
    groups = {"world": list(range(WORLD))}
    pgs = {"world": dist.distributed_c10d._get_default_group()}
    twins = {"world": dist.new_group(groups["world"], backend="gloo")}
    for ranks in SUBGROUPS[WORLD]:
        pg, twin = dist.new_group(ranks), dist.new_group(ranks, backend="gloo")
        name = ",".join(map(str, ranks))
        groups[name] = ranks
        if RANK in ranks:
            pgs[name], twins[name] = pg, twin
    return groups, pgs, twins


def same_bits(ref: torch.Tensor, got: torch.Tensor) -> bool:
    """got (neuron's) has ref's (gloo's) bits; for bool, ref's values and only
    the bytes 0 and 1 (gloo's SUM of bool writes 2 where two ranks are True,
    docs/develop.md)."""
    if ref.dtype != got.dtype or ref.shape != got.shape:
        return False
    if got.dtype == torch.bool:
        return torch.equal(ref, got) and bool((got.view(torch.uint8) <= 1).all())
    return torch.equal(ref.contiguous().view(torch.uint8), got.contiguous().view(torch.uint8))


def first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ''}"


def run_sequence(seed: int, groups, pgs, twins, side, stats: Counter) -> list[str]:
    """Runs sequence `seed`; returns its mismatches (empty: it passed)."""
    steps = draw_sequence(seed, groups)
    placed, waits, problems = {}, {}, []
    for i, s in enumerate(steps):
        if RANK in s.members and (not KEEP_STEPS or i in KEEP_STEPS):
            stats[f"step {s.kind}"] += 1
            if s.kind == "bad":
                outcome = {}
                for device in ("cpu", "neuron"):
                    try:
                        issue_bad(s, device, RANK, (twins if device == "cpu" else pgs)[s.group])
                        outcome[device] = None
                    except Exception as exc:  # both must refuse the call
                        outcome[device] = first_line(exc)
                if outcome["cpu"] is None or outcome["neuron"] is None:
                    problems.append(f"step {i} {s.describe()}: refused by only one backend: {outcome}")
                else:
                    stats["bad calls refused by both"] += 1
            else:
                placed[i] = {}
                for device in ("cpu", "neuron"):
                    if device == "neuron" and s.side_stream:
                        side.wait_stream(torch.neuron.current_stream())
                        with torch.neuron.stream(side):
                            work, placed[i][device] = issue(s, device, RANK, pgs[s.group])
                    else:
                        work, placed[i][device] = issue(s, device, RANK, pgs[s.group])
                    if s.async_op and work is not None:
                        waits.setdefault(s.wait_at, []).append(work)
                stats["async calls"] += s.async_op
                stats["side-stream calls"] += s.side_stream
        for work in waits.pop(i, []):
            work.wait()
    torch.neuron.current_stream().wait_stream(side)
    for i, pair in placed.items():
        for k, (ref, got) in enumerate(zip(pair["cpu"].compared(), pair["neuron"].compared())):
            got = got.cpu()
            stats["buffers compared"] += 1
            if not same_bits(ref, got):
                bad = (ref != got).nonzero()[:3].flatten().tolist() if ref.shape == got.shape else "shape"
                problems.append(
                    f"step {i} {steps[i].describe()}: buffer {k} differs from gloo's "
                    f"(first differing elements {bad}: neuron {got.flatten()[:6].tolist()}, "
                    f"gloo {ref.flatten()[:6].tolist()})"
                )
    return problems


def main() -> int:
    init(backend="cpu:gloo,neuron:neuron", timeout_s=int(os.environ.get("FUZZ_COLLECTIVE_TIMEOUT", "60")))
    groups, pgs, twins = make_groups()
    side = torch.neuron.Stream()
    listed = os.environ.get("FUZZ_COLLECTIVE_SEEDS", "")
    seeds = (
        [int(x) for x in listed.split(",")] if listed else range(int(sys.argv[1]), int(sys.argv[1]) + int(sys.argv[2]))
    )
    torch.neuron.synchronize()
    baseline = torch.neuron.memory_allocated()
    stats, failed = Counter(), False
    for seed in seeds:
        # A sequence that hangs dumps every thread's stack and exits instead.
        faulthandler.dump_traceback_later(HANG_S, exit=True)
        print(f"seed {seed}", file=sys.stderr, flush=True)
        try:
            problems = run_sequence(seed, groups, pgs, twins, side, stats)
        except Exception:
            print(f"ERROR seed={seed} world={WORLD} rank={RANK}:\n{traceback.format_exc()}", flush=True)
            failed = True
            break
        torch.neuron.synchronize()
        leaked = torch.neuron.memory_allocated() - baseline
        if leaked:
            problems.append(f"{leaked} bytes of neuron memory still allocated after the sequence")
        for p in problems:
            print(f"MISMATCH seed={seed} world={WORLD} rank={RANK}: {p}", flush=True)
        failed |= bool(problems)
        stats["sequences"] += 1
    faulthandler.cancel_dump_traceback_later()
    print("STATS " + json.dumps(dict(stats)), flush=True)
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
