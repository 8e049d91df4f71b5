"""`make soak` (docs/develop.md): the train phase for 2,000
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
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))  # _figures

from _figures import Table, report  # noqa: E402
from helpers.dist_launch import launch, shm_left_by  # noqa: E402
from helpers.processes import worker_env  # noqa: E402

PHASES = [("train", 2000, 1), ("generate", 2000, 1), ("fsdp", 500, 2)]


def verdicts(stdout: str) -> list[dict]:
    return [json.loads(line[len("SOAK ") :]) for line in stdout.splitlines() if line.startswith("SOAK ")]


def run(phase: str, steps: int, ranks: int) -> tuple[bool, list[dict], str]:
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
    left = sorted(shm_left_by(r for r in results if hasattr(r, "pid")))  # only ranks make segments
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
    table = Table(
        "soak phases",
        [
            "phase",
            "steps",
            "ranks",
            "result",
            "seconds",
            "allocated bytes (steady)",
            "RSS MiB after warm-up / end",
            "descriptors",
            "threads",
        ],
        note="Each phase in processes of its own; after warm-up the allocated bytes must not move, reserved bytes "
        "not grow, the resident set grow by at most 64 MiB, descriptors, threads and /dev/shm segments stay; "
        "rank 0's verdict shown.",
    )
    for phase, steps, ranks in PHASES:
        n = max(100, int(steps * args.scale))
        ok, found, errors = run(phase, n, ranks)
        for v in found:
            print(json.dumps(v))
        print(f"{phase}: {'passed' if ok else 'FAILED'}", flush=True)
        if errors:
            print(errors)
        failed |= not ok
        v = found[0] if found else {}
        rss = v.get("rss_mib", (None, None, None))
        table.add(
            phase,
            n,
            ranks,
            "passed" if ok else "FAILED",
            v.get("seconds"),
            v.get("allocated"),
            f"{rss[0]} / {rss[2]}",
            str(v.get("fds")),
            str(v.get("threads")),
        )
    if args.scale == 1.0:  # make soak's figures; a scaled run (make test's slice) is not recorded
        report("soak", [table])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
