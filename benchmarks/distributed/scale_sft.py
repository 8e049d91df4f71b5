"""The TorchNeuron announcement's SFT grid on one host (`make scale`): the announcement's
`TP_SIZE=4 FSDP_SIZE=8 torchrun --nproc_per_node=32 examples/sft_neuron_example.py`
(the script unchanged) on 8 emulated Trainium2 chips at LNC=2 (32 logical
cores, `TORCH_NEURONX_EMU_CHIPS=8`; rank r uses neuron:LOCAL_RANK), and a
reference grid of 2 processes with the same global batch and seed. Prints each
run's logged losses, wall time and peak host memory per process, and compares
the losses: the first within bf16 rounding, each step within 5%.

Contracts:
- Both runs train build/artifacts/qwen3-tiny-kv4 (4 KV heads: TP=4 shards whole
  heads) with the same flags but the per-device batch, which is
  global_batch / FSDP_SIZE (the data-parallel degree; TP ranks share a batch),
  and gradient accumulation 1.
- Memory per process is sampled every --poll seconds from /proc (so a short
  peak between samples can be missed, except VmHWM, which the kernel keeps):
  VmHWM (peak resident), Private (Private_Clean + Private_Dirty of
  smaps_rollup: what the process alone holds), Anonymous (what each further
  rank adds: libraries' pages are shared) and Pss.
- One Inductor cache directory (build/scale/inductor) serves every rank and
  both runs, so a graph is compiled once, not once per rank.
- Exit status 0 only if every run finished and the losses compare.

Run: .venv/bin/python benchmarks/distributed/scale_sft.py [--grid 4x8] [--ref 2x1]
     [--compile true|false] [--max-steps 4] [--global-batch 8]
     [--grid 1x1 --ref none]   (one process: its private memory alone)
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

from examples import build_artifacts

ROOT = _shared.ROOT
OUT = ROOT / "build" / "scale"
ARTIFACTS = ROOT / "build" / "artifacts"
LOSS = re.compile(r"'loss': '?([0-9.eE+-]+)'?")
# One rank's anonymous memory, measured alone (--grid 1x1): 600 MiB compiled,
# 520 eager; import torch (CUDA build) alone is 281 MiB of it, trl 170 more.
ANON_PER_RANK_GIB = 0.6
BF16_REL = 2.0**-7  # two bf16 roundings (8-bit significand: 2^-8 each)


def proc_memory(pid: int) -> dict | None:
    """{hwm, private, anon, pss} in bytes of a live process, or None once it is gone. private
    counts a library's pages while no other process maps them; anon (heap, device memory of
    the emulator, stacks) is what each further process adds, the libraries being shared."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None

    def kb(text, key):
        return int(re.search(rf"^{key}:\s+(\d+) kB", text, re.M).group(1)) * 1024

    return {
        "hwm": kb(status, "VmHWM"),
        "private": kb(rollup, "Private_Clean") + kb(rollup, "Private_Dirty"),
        "anon": kb(rollup, "Anonymous"),
        "pss": kb(rollup, "Pss"),
    }


def descendants(pid: int) -> list[int]:
    """Every process under `pid` (torchrun's ranks), from /proc/*/stat."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        frontier += kids
    return found


class Sampler(threading.Thread):
    """Peak memory of each rank (by pid) and the machine's lowest MemAvailable."""

    def __init__(self, root: int, poll: float):
        super().__init__(daemon=True)
        self.root, self.poll, self.peaks, self.min_available = root, poll, {}, math.inf
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            for pid in descendants(self.root):
                m = proc_memory(pid)
                try:
                    rank = b"sft_neuron_example.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    comm = "rank" if rank else Path(f"/proc/{pid}/comm").read_text().strip()
                except (FileNotFoundError, ProcessLookupError):
                    continue
                if m and (rank or m["hwm"] > 100 << 20):  # a rank, or a helper (compile worker), not a shell
                    peak = self.peaks.setdefault(pid, dict.fromkeys(m, 0) | {"rank": rank, "comm": comm})
                    for k, v in m.items():
                        peak[k] = max(peak[k], v)
            avail = re.search(r"MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text())
            self.min_available = min(self.min_available, int(avail.group(1)) * 1024)
            self.stopped.wait(self.poll)


def run_grid(tp: int, fsdp: int, args) -> dict:
    n = tp * fsdp
    out = OUT / f"tp{tp}-fsdp{fsdp}-{'compiled' if args.compile == 'true' else 'eager'}"
    flags = [
        "--model_name_or_path",
        str(ARTIFACTS / "qwen3-tiny-kv4"),
        "--dataset_name",
        str(ARTIFACTS / "qa-chat"),
        "--dataset_train_split",
        "train_sft",
        "--output_dir",
        str(out),
        "--dtype",
        "bfloat16",
        "--max_length",
        "64",
        "--packing",
        "true",
        "--packing_strategy",
        "wrapped",
        "--learning_rate",
        "3e-3",
        "--max_steps",
        str(args.max_steps),
        "--logging_steps",
        "1",
        "--per_device_train_batch_size",
        str(args.global_batch // fsdp),
        "--gradient_accumulation_steps",
        "1",
        "--seed",
        "42",
        "--save_strategy",
        "no",
        "--save_only_model",
        "true",
        "--report_to",
        "none",
        "--disable_tqdm",
        "true",
        "--torch_compile",
        args.compile,
    ]
    env = dict(
        os.environ,
        TP_SIZE=str(tp),
        FSDP_SIZE=str(fsdp),
        TORCH_NEURONX_EMU_CHIPS=str(max(1, math.ceil(n / 4))),
        OMP_NUM_THREADS="1",
        HF_DEACTIVATE_ASYNC_LOAD="1",
        TOKENIZERS_PARALLELISM="false",
        TORCHINDUCTOR_CACHE_DIR=str(OUT / "inductor"),
    )
    if args.compile_threads:  # 1: each rank compiles in-process, without Inductor's pool of worker processes
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(args.compile_threads)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={n}",
        str(ROOT / "examples" / "sft_neuron_example.py"),
        *flags,
    ]
    print(
        f"== TP={tp} x FSDP={fsdp} ({n} processes, compile {args.compile}):\n   "
        f"TP_SIZE={tp} FSDP_SIZE={fsdp} TORCH_NEURONX_EMU_CHIPS={env['TORCH_NEURONX_EMU_CHIPS']} "
        f"{' '.join(cmd[2:5])} ... {' '.join(flags[-14:])}",
        flush=True,
    )
    avail = int(re.search(r"MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) / 2**20
    print(
        f"   predicted: {n} x {ANON_PER_RANK_GIB * 1024:.0f} MiB anonymous = {n * ANON_PER_RANK_GIB:.1f} GiB; "
        f"available now {avail:.1f} GiB",
        flush=True,
    )
    out.mkdir(parents=True, exist_ok=True)
    log = out / "log.txt"
    start = time.monotonic()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
        sampler = Sampler(proc.pid, args.poll)
        sampler.start()
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # torchrun forwards it to its ranks
            rc = f"timeout after {args.timeout} s"
            proc.wait(60)
        sampler.stopped.set()
        sampler.join()
    wall = time.monotonic() - start
    text = log.read_text()
    ranks = [r for r in sampler.peaks.values() if r["rank"]]
    helpers = [r for r in sampler.peaks.values() if not r["rank"]]
    result = {
        "tp": tp,
        "fsdp": fsdp,
        "processes": n,
        "rc": rc,
        "wall_s": round(wall, 1),
        "losses": [float(x) for x in LOSS.findall(text)],
        "ranks_sampled": len(ranks),
        "log": str(log),
        "min_available_gib": round(sampler.min_available / 2**30, 2),
    }
    for k in ("hwm", "private", "anon", "pss"):
        vals = [r[k] for r in ranks] or [0]
        result[f"{k}_mib"] = {"max": round(max(vals) / 2**20), "mean": round(sum(vals) / len(vals) / 2**20)}
    result["sum_pss_gib"] = round(sum(r["pss"] for r in ranks) / 2**30, 2)
    # helpers: Inductor's compile workers and the like, each a peak at its own time
    result["helpers"] = {
        "count": len(helpers),
        "pss_gib": round(sum(r["pss"] for r in helpers) / 2**30, 2),
        "names": sorted({r["comm"] for r in helpers}),
    }
    print(json.dumps(result), flush=True)
    if rc != 0:
        print(text[-4000:])
    return result


def loss_diffs(a: list[float], b: list[float]) -> tuple[float, float] | None:
    """The first loss's relative difference and the worst step's, or None if the counts differ."""
    if not a or len(a) != len(b):
        return None
    return abs(a[0] - b[0]) / abs(b[0]), max(abs(x - y) / abs(y) for x, y in zip(a, b))


def compare(a: list[float], b: list[float]) -> tuple[bool, str]:
    """The first loss within bf16 rounding, every step within 5%."""
    diffs = loss_diffs(a, b)
    if diffs is None:
        return False, f"loss counts differ: {len(a)} vs {len(b)}"
    first, worst = diffs
    ok = first <= BF16_REL and worst <= 0.05
    return ok, f"first loss rel. diff {first:.2e} (bf16 bound {BF16_REL:.2e}); worst step {worst:.2%} (bound 5%)"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", default="4x8", help="TPxFSDP of the large run")
    p.add_argument("--ref", default="2x1", help="TPxFSDP of the reference run, or none")
    p.add_argument("--compile", default="true", choices=["true", "false"])
    p.add_argument("--max-steps", type=int, default=4)
    p.add_argument("--global-batch", type=int, default=8)
    p.add_argument(
        "--compile-threads",
        type=int,
        default=1,
        help="TORCHINDUCTOR_COMPILE_THREADS per rank (0: Inductor's default, min(32, cores))",
    )
    p.add_argument("--poll", type=float, default=2.0)
    p.add_argument("--timeout", type=float, default=2400)
    args = p.parse_args()
    build_artifacts.main(["--out", str(ARTIFACTS)])
    grids = [tuple(map(int, g.split("x"))) for g in ([args.ref] if args.ref != "none" else []) + [args.grid]]
    results = [run_grid(tp, fsdp, args) for tp, fsdp in grids]
    ok = all(r["rc"] == 0 for r in results)
    runs = Table(
        f"SFT grids on one host ({args.max_steps} steps, global batch {args.global_batch}, compile {args.compile})",
        [
            "run",
            "processes",
            "exit",
            "wall s",
            "peak RSS (VmHWM) MiB per process, max",
            "peak RSS MiB, mean",
            "private MiB, max",
            "private MiB, mean",
            "sum of Pss GiB",
            "lowest MemAvailable GiB",
            "losses",
        ],
        note=f"Memory sampled every {args.poll} s from /proc (VmHWM is the kernel's own peak); the first run is the "
        "reference grid with the same global batch and seed.",
    )
    for r in results:
        runs.add(
            f"TP {r['tp']} x FSDP {r['fsdp']}",
            r["processes"],
            r["rc"],
            r["wall_s"],
            r["hwm_mib"]["max"],
            r["hwm_mib"]["mean"],
            r["private_mib"]["max"],
            r["private_mib"]["mean"],
            r["sum_pss_gib"],
            r["min_available_gib"],
            ", ".join(f"{x:.4f}" for x in r["losses"]),
        )
    tables = [runs]
    if len(results) == 2 and ok:
        same, text = compare(results[1]["losses"], results[0]["losses"])
        print(("losses match: " if same else "LOSSES DIFFER: ") + text)
        diffs = loss_diffs(results[1]["losses"], results[0]["losses"]) or (None, None)
        losses = Table(
            "losses of the large grid against the reference",
            ["losses match", "first loss rel. diff", "bound (two bf16 roundings)", "worst step rel. diff", "bound"],
            note="Against the reference grid's losses, step by step.",
        )
        losses.add(same, diffs[0], BF16_REL, diffs[1], 0.05)
        tables.append(losses)
        ok = same
    report("scale_sft", tables)
    (OUT / f"results-{args.grid}-{args.compile}.json").write_text(json.dumps(results, indent=1))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
