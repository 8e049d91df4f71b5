"""The OpInfo parity sweep (tests/sweep/opinfo_sweep.py) over every OpInfo,
two samples per (op, dtype), float32 backward included: the failing pairs must
be exactly those listed with reasons in tests/sweep/expected_failures.tsv, so a
regression and a new pass are both noticed. `make sweep` runs it with more
samples."""

import csv
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_sweep_matches_expected_failures(tmp_path):
    table = tmp_path / "sweep.tsv"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sweep" / "opinfo_sweep.py"), "--max-samples", "2", "--out", str(table)],
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    with open(table) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    failing = {(r["op"], r["dtype"]): r["reason"] for r in rows if r["result"] == "fail"}
    with open(ROOT / "tests" / "sweep" / "expected_failures.tsv") as f:
        expected = {(r["op"], r["dtype"]) for r in csv.DictReader(f, delimiter="\t")}
    new_failures = {k: v for k, v in failing.items() if k not in expected}
    new_passes = expected - failing.keys()
    assert not new_failures, f"pairs that fail but are not expected to: {new_failures}"
    assert not new_passes, f"expected failures that now pass (remove them from the file): {sorted(new_passes)}"
    ran = sum(r["result"] != "skip" for r in rows)
    assert len(rows) > 3400 and ran > 2400  # the denominator: all of op_db, 4 dtypes + backward
    assert sum(r["dtype"] == "float32-backward" and r["result"] == "pass" for r in rows) > 450
    assert len(failing) / ran < 0.01
