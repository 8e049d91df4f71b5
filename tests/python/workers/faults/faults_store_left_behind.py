"""Joins a group of WORLD ranks, checks one all_reduce, and with argv[1] ==
"leave" exits without destroying the FileStore, so its file keeps this run's
keys (what a killed or unclean run leaves for the next run on the same file;
test_distributed_faults.py)."""

import os
import sys

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

init()
t = torch.full((4,), float(RANK + 1), device="neuron")
dist.all_reduce(t)
assert t.tolist() == [WORLD * (WORLD + 1) / 2] * 4, t
print("ok", flush=True)
if sys.argv[1:] == ["leave"]:
    os._exit(0)
dist.destroy_process_group()
