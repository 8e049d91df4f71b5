"""Availability and the device count (which never raise); with argv[1] ==
"allocate", then a neuron tensor, which raises on a bad setting (test_device.py)."""

import sys

import torch

print(torch.neuron.is_available(), torch.neuron.device_count())
if sys.argv[1:] == ["allocate"]:
    torch.ones(1, device="neuron")
