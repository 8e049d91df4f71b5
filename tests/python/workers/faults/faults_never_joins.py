"""Joins a group whose other rank is never started: init times out naming it
(test_distributed_faults.py)."""

import sys
import time

from helpers.rank import init

start = time.monotonic()
try:
    init(timeout_s=3)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(time.monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("init did not fail")
