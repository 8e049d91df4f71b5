"""Puts benchmarks/ on sys.path for the scripts of this folder (the shared
helpers _figures, _timing and _ranks live there), and through _paths the
repository root and tests/python. Each script imports this module first;
ROOT is the repository root."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _paths import ROOT  # noqa: E402

__all__ = ["ROOT"]
