"""Whether torch has a neuron module after `import torch` (test_device.py:
with TORCH_DEVICE_BACKEND_AUTOLOAD=0 it has none)."""

import torch

print(hasattr(torch, "neuron"))
