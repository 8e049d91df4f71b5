"""Ranks call allreduce with different shapes, then different dtypes: both
raise on every rank, and the group works afterwards (test_distributed_faults.py)."""

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

init(timeout_s=30)
n = 4 if RANK == 0 else 8
for label, t in (
    ("shape", torch.ones(n, device="neuron")),
    ("dtype", torch.ones(4, device="neuron", dtype=torch.float32 if RANK == 0 else torch.int64)),
):
    try:
        dist.all_reduce(t)
        print("NO ERROR", label)
    except Exception as e:
        print("ERROR", label, e)
t = torch.ones(4, device="neuron")
dist.all_reduce(t)  # the group still works afterwards
assert t[0].item() == WORLD
print("RECOVERED")
