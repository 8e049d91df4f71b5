"""Compiled decode on neuron against CPU Inductor, each case in its own
process (benchmarks/models/compile.py times them in one process, where the
CPU case came out ahead in either order). benchmarks/models/compile.py's decode at
hidden 128 and 256, one compiled case per process, ROUNDS processes per case
in alternating order; the median of each case's processes. Both share one
Inductor cache (compile time is not measured here).

Run: .venv/bin/python benchmarks/models/compiled_decode_processes.py
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

ROUNDS = 4
HERE = Path(__file__).resolve().parent

WORKER = r"""
import json, sys
import compile as bench
device = sys.argv[1]
bench.CASES = [(device, True)]
bench.ROUNDS = 3
print(json.dumps([bench.decode_rates(size)[(device, True)] for size in bench.DECODE_SIZES]))
"""


def one(device: str, cache: str) -> list[float]:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    out = subprocess.run(
        [sys.executable, "-c", WORKER, device], cwd=HERE, env=env, capture_output=True, text=True, timeout=1200
    )
    if out.returncode != 0:
        raise SystemExit(f"{device} decode failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    runs = {"neuron": [], "cpu": []}
    with tempfile.TemporaryDirectory() as cache:
        for r in range(ROUNDS):
            for device in ("neuron", "cpu") if r % 2 == 0 else ("cpu", "neuron"):
                runs[device].append(one(device, cache))
    from compile import DECODE_SIZES

    table = Table(
        f"compiled decode, one case per process: tokens/s (median of {ROUNDS} processes)",
        [
            "decode, batch 1, static cache",
            "neuron compiled tokens/s",
            "neuron runs",
            "CPU Inductor tokens/s",
            "CPU runs",
            "neuron/CPU",
        ],
        note="Against CPU Inductor, each case in its own process in alternating order "
        "(benchmarks/models/compile.py's decode, best of 3 rounds per process); both share one Inductor cache.",
    )
    for i, size in enumerate(DECODE_SIZES):
        n, c = ([run[i] for run in runs[d]] for d in ("neuron", "cpu"))
        table.add(
            f"hidden {size['hidden_size']}",
            statistics.median(n),
            ", ".join(f"{x:.0f}" for x in n),
            statistics.median(c),
            ", ".join(f"{x:.0f}" for x in c),
            statistics.median(n) / statistics.median(c),
        )
    report("compiled_decode_processes", [table])


if __name__ == "__main__":
    main()
