"""Rank 1 dies without sending; rank 0's recv from it names it
(test_distributed_rooted_p2p.py)."""

import os
import time

import torch
import torch.distributed as dist
from helpers.rank import RANK, init

init(timeout_s=60)
if RANK == 1:
    os._exit(3)  # dies without sending
start = time.monotonic()
try:
    dist.recv(torch.empty(4, device="neuron"), 1)
    raise SystemExit("recv from a dead rank returned")
except dist.DistBackendError as e:
    assert "rank 1 of the group exited" in str(e) and "recv of 16 bytes" in str(e), e
print("named the dead peer after", round(time.monotonic() - start, 2), "s")
