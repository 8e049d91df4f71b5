"""Median latency of the `neuron` group's allreduce and all_gather_into_tensor
at world 2 (8 B, 256 KiB, 2 MiB per rank; 300 calls after 20 warm-up calls),
for comparing two builds side by side: it starts its two ranks with the
interpreter and flags it was started with, so a build installed elsewhere is
measured the same way.

Run: .venv/bin/python benchmarks/distributed/collective_medians.py
     (another build: PYTHONPATH=<its site dir>:.venv/lib/python3.11/site-packages \
      .venv/bin/python -S benchmarks/distributed/collective_medians.py)
"""

import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import ROOT, Table, command, report

SIZES = (8, 256 << 10, 2 << 20)
WORLD = 2


def rank_main(store: str) -> None:
    import torch
    import torch.distributed as dist

    import torch_neuronx

    rank = int(os.environ["RANK"])
    dist.init_process_group(
        "neuron",
        store=dist.FileStore(store, WORLD),
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=60),
    )
    medians = {}
    for nbytes in SIZES:
        n = max(1, nbytes // 4)
        t, out = torch.ones(n, device="neuron"), torch.empty(n * WORLD, device="neuron")
        calls = {
            "allreduce": lambda: dist.all_reduce(t),
            "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(out, t),
        }
        for name, call in calls.items():
            for _ in range(20):
                call()
            times = []
            for _ in range(300):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
            medians[name, nbytes] = statistics.median(times) * 1e6
    if rank == 0:
        rows = [[name, nbytes, us] for (name, nbytes), us in medians.items()]
        print(json.dumps({"torch_neuronx": os.path.dirname(torch_neuronx.__file__), "rows": rows}))
    dist.destroy_process_group()


def main() -> None:
    flags = ["-S"] if sys.flags.no_site else []
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [
            subprocess.Popen(
                [sys.executable, *flags, __file__, "--rank", store],
                env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(r), OMP_NUM_THREADS="1"),
                stdout=subprocess.PIPE if r == 0 else None,
                text=True,
            )
            for r in range(WORLD)
        ]
        out = procs[0].communicate(timeout=600)[0]
        codes = [p.wait(timeout=600) for p in procs]
    if max(codes):
        sys.exit(max(codes))
    result = json.loads(out.strip().splitlines()[-1])
    where = Path(result["torch_neuronx"])
    where = f"this checkout's {where.relative_to(ROOT)}" if where.is_relative_to(ROOT) else str(where)
    table = Table(
        f"the neuron group's collectives at world {WORLD}: median us per call",
        ["op", "bytes per rank", "median us"],
        note=f"torch_neuronx imported from {where}; 300 calls after 20, one thread per rank. "
        "For comparing two builds run the same way (no other side in this run).",
    )
    for name, nbytes, us in result["rows"]:
        table.add(name, nbytes, us)
    # Another build: its site directory on PYTHONPATH, with -S (the docstring's second form).
    other = f"PYTHONPATH={shlex.quote(os.environ.get('PYTHONPATH', ''))} " if sys.flags.no_site else ""
    report("collective_medians", [table], command_line=other + command())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank":
        rank_main(sys.argv[2])
    else:
        main()
