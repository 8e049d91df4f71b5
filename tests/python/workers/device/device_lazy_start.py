"""The runtime starts at the first neuron tensor, not at device_count() (test_device.py)."""

import torch

a = torch.neuron.is_initialized()
torch.neuron.device_count()
b = torch.neuron.is_initialized()
torch.ones(1, device="neuron")
print(a, b, torch.neuron.is_initialized())
