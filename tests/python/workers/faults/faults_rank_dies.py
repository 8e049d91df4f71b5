"""Rank 1 exits between two allreduces; the survivors' next allreduce raises
naming it (test_distributed_faults.py)."""

import os
import sys
import time

import torch
import torch.distributed as dist
from helpers.rank import RANK, init

init(timeout_s=60)
t = torch.ones(1000, device="neuron")
dist.all_reduce(t)
if RANK == 1:
    os._exit(3)  # dies between two collectives
start = time.monotonic()
try:
    dist.all_reduce(t)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(time.monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("the allreduce did not fail")
