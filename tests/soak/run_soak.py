"""`make soak` (docs/reliability.md, "Soak"): the train phase for 2,000
steps, the generate phase for 2,000 calls and the 2-rank FSDP phase for 500
steps (soak_phases.py), each in processes of their own; prints each verdict
and whether /dev/shm is back to what it held before. Exit status 1 if any
phase failed. --scale 0.1 runs a tenth of the steps (a quick look)."""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "python"))  # tests/python: helpers

from helpers.dist_launch import launch, shm_entries  # noqa: E402
from helpers.processes import worker_env  # noqa: E402

PHASES = [("train", 2000, 1), ("generate", 2000, 1), ("fsdp", 500, 2)]


def verdicts(stdout: str) -> list[dict]:
    return [json.loads(line[len("SOAK ") :]) for line in stdout.splitlines() if line.startswith("SOAK ")]


def run(phase: str, steps: int, ranks: int) -> tuple[bool, list[dict], str]:
    before = shm_entries()
    script = HERE / "soak_phases.py"
    if ranks == 1:
        p = subprocess.run(
            [sys.executable, str(script), phase, str(steps)],
            capture_output=True,
            text=True,
            env=worker_env(OMP_NUM_THREADS="1", PYTHONPATH=f"{HERE}:{HERE.parent / 'python'}"),
            timeout=3600,
        )
        results = [p]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = launch(
                script,
                ranks,
                Path(tmp),
                timeout=3600,
                args=[phase, steps],
                env={"PYTHONPATH": f"{HERE}:{HERE.parent / 'python'}"},
            )
    found = [v for r in results for v in verdicts(r.stdout)]
    left = sorted(shm_entries() - before)
    ok = all(r.returncode == 0 for r in results) and len(found) == ranks and not left
    errors = (
        "" if ok else "\n".join(r.stderr[-3000:] for r in results) + (f"\nleft in /dev/shm: {left}" if left else "")
    )
    return ok, found, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    failed = False
    for phase, steps, ranks in PHASES:
        ok, found, errors = run(phase, max(100, int(steps * args.scale)), ranks)
        for v in found:
            print(json.dumps(v))
        print(f"{phase}: {'passed' if ok else 'FAILED'}", flush=True)
        if errors:
            print(errors)
        failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
