"""The physical cores of devices 0 and 1 (test_device.py)."""

import torch

print([torch.neuron.get_device_properties(i).physical_core for i in range(2)])
