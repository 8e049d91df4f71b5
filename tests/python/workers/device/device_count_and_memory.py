"""The device count and device 0's memory under this environment (test_device.py)."""

import torch

print(torch.neuron.device_count(), torch.neuron.get_device_properties(0).total_memory)
