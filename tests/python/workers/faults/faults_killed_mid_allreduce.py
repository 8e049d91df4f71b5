"""Rank 1 is SIGKILLed while the ranks run 24 MiB allreduces; the survivors
raise naming it (test_distributed_faults.py)."""

import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist
from helpers.rank import RANK, init

init(timeout_s=60)
t = torch.ones(6 << 20, device="neuron")  # 24 MiB: six chunks per call
dist.all_reduce(t)
if RANK == 1:
    threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
start = time.monotonic()
try:
    for _ in range(1000):
        dist.all_reduce(t)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(time.monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("the allreduces did not fail")
