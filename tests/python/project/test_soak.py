"""The soak (`make soak`: tests/soak/run_soak.py, docs/develop.md) at a
tenth of its steps: each phase keeps neuron's allocated memory in its steady
state, its resident set bounded, and leaks no descriptor, thread or /dev/shm
segment; `make soak` runs the full 2,000 / 2,000 / 500 steps."""

import subprocess
import sys
from pathlib import Path

RUN_SOAK = Path(__file__).resolve().parents[2] / "soak" / "run_soak.py"


def test_the_soak_at_a_tenth_of_its_steps_passes():
    proc = subprocess.run(
        [sys.executable, str(RUN_SOAK), "--scale", "0.1"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert [line for line in proc.stdout.splitlines() if line.endswith("passed")] == [
        "train: passed",
        "generate: passed",
        "fsdp: passed",
    ], proc.stdout
