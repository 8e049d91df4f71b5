"""`import torch` alone loads torch_neuronx (the torch.backends entry point)
and registers neuron (test_device.py)."""

import sys

import torch

print("torch_neuronx" in sys.modules, torch.ones(1, device="neuron").device)
