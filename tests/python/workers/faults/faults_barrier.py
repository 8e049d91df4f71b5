"""A group of WORLD ranks that meets at one barrier (test_distributed_faults.py:
its creation removes the segments left by dead creators)."""

import torch.distributed as dist
from helpers.rank import init

init()
dist.barrier()
print("ok")
