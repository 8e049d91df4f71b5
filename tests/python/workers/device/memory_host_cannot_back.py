"""A 16 TiB tensor on a 64 TiB device: the host cannot map it, reported as
OutOfMemoryError (test_memory.py)."""

import torch

try:
    torch.empty(2**44, dtype=torch.uint8, device="neuron")
except torch.OutOfMemoryError as e:
    print(e)
