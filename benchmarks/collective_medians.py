"""Median latency of the `neuron` group's allreduce and all_gather_into_tensor
at world 2 (8 B, 256 KiB, 2 MiB per rank; 300 calls after 20 warm-up calls),
for comparing two builds side by side: it starts its two ranks with the
interpreter and flags it was started with, so a build installed elsewhere is
measured the same way.

Run: .venv/bin/python benchmarks/collective_medians.py
     (another build: PYTHONPATH=<its site dir>:.venv/lib/python3.11/site-packages \
      .venv/bin/python -S benchmarks/collective_medians.py)
"""

import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

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
        print(f"torch_neuronx from {os.path.dirname(torch_neuronx.__file__)}")
        for (name, nbytes), us in medians.items():
            print(f"{name:<24}{nbytes:>9} B {us:9.1f} us")
    dist.destroy_process_group()


def main() -> None:
    flags = ["-S"] if sys.flags.no_site else []
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [
            subprocess.Popen(
                [sys.executable, *flags, __file__, "--rank", store],
                env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(r), OMP_NUM_THREADS="1"),
            )
            for r in range(WORLD)
        ]
        codes = [p.wait(timeout=600) for p in procs]
    sys.exit(max(codes))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank":
        rank_main(sys.argv[2])
    else:
        main()
