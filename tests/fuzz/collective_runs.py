"""Runs the collective-sequence fuzzer's long-lived worker groups
(collective_worker.py) and sums what they report: used by `make fuzz`
(test_collective_sequences.py) and by `make test`
(tests/python/distributed/test_collective_fuzz.py)."""

import json
import os
from collections import Counter
from pathlib import Path

from helpers.dist_launch import launch, shm_left_by

WORKER = Path(__file__).resolve().parent / "collective_worker.py"
TOTALS: Counter = Counter()  # over every group this process ran (the terminal summary prints it)


def run_groups(world: int, first_seed: int, count: int, tmp_path, timeout: float = 1200) -> Counter:
    """Sequences first_seed .. first_seed+count-1 on one group of `world`
    ranks; fails naming every mismatch, error or leaked /dev/shm segment."""
    env = {k: v for k, v in os.environ.items() if k == "TORCH_NEURONX_EMU_QUEUE"}  # make fuzz's second half
    results = launch(WORKER, world, tmp_path, timeout=timeout, args=[first_seed, count], env=env)
    problems = [line for r in results for line in r.stdout.splitlines() if line.startswith(("MISMATCH", "ERROR"))]
    failed = [
        f"rank {rank} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        for rank, r in enumerate(results)
        if r.returncode != 0
    ]
    if problems or failed:  # every rank's whole output kept: the first cause is often early in another rank's
        for rank, r in enumerate(results):
            (tmp_path / f"rank{rank}.stdout").write_text(r.stdout)
            (tmp_path / f"rank{rank}.stderr").write_text(r.stderr)
        failed.append(f"every rank's whole output: {tmp_path}/rank<r>.stdout, .stderr")
    assert not problems and not failed, "\n".join(problems[:20] + failed)
    stats = Counter()
    for r in results:
        line = next(x for x in r.stdout.splitlines() if x.startswith("STATS "))
        stats.update(json.loads(line[len("STATS ") :]))
    left = shm_left_by(results)
    assert not left, f"left in /dev/shm: {sorted(left)}"
    TOTALS.update({f"world {world} sequences": stats["sequences"] // world})
    TOTALS.update({k: v for k, v in stats.items() if k != "sequences"})
    return stats
