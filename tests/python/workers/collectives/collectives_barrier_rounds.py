"""ROUNDS (argv[1]) of barrier then all_gather (test_distributed_collectives.py):
a rank released from a barrier must not see a slower rank's barrier as its next call."""

import sys

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

ROUNDS = int(sys.argv[1])

init()
torch.neuron.set_device(RANK % torch.neuron.device_count())
for i in range(ROUNDS):
    dist.barrier(device_ids=[torch.neuron.current_device()] if i % 2 else None)
    outs = [torch.empty(1, device="neuron") for _ in range(WORLD)]
    dist.all_gather(outs, torch.full((1,), float(RANK * 1000 + i), device="neuron"))
    assert [int(o.item()) for o in outs] == [r * 1000 + i for r in range(WORLD)], i
    dist.all_reduce(torch.empty(0, device="neuron"))  # no data step, like a barrier
print("rounds", ROUNDS)
dist.destroy_process_group()
