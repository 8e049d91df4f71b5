"""The one place the benchmarks reach the rest of the repository: importing
this module puts the repository root and tests/python on sys.path, so that a
benchmark (run as `python benchmarks/x.py` or under torchrun, with benchmarks/
as its script folder) imports what it shares with the examples as `from
examples import ...` and with the tests as `from helpers import ...`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "python"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
