"""The one place the benchmarks reach the rest of the repository: importing
this module puts the repository root on sys.path, so that a benchmark (run as
`python benchmarks/x.py` or under torchrun, with benchmarks/ as its script
folder) imports what it shares with the examples as `from examples import ...`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
