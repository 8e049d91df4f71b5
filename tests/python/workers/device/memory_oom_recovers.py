"""An allocation beyond a 1 GiB device raises OutOfMemoryError naming the
device and sizes; the freed memory is reused afterwards (test_memory.py)."""

import torch

a = torch.empty(600 * 2**20, dtype=torch.uint8, device="neuron:1")
try:
    torch.empty(600 * 2**20, dtype=torch.uint8, device="neuron:1")
except torch.OutOfMemoryError as e:
    print("OOM", e)
del a
b = torch.empty(600 * 2**20, dtype=torch.uint8, device="neuron:1")  # freed memory reused
b.fill_(3)
print("RECOVERED", int(b[0].item()), torch.neuron.memory_stats(1)["num_ooms"])
