"""`torch_xla` as AWS's NKI tutorial drivers use it, on the `neuron` device:
`torch_xla.device()` is `neuron`, `torch_xla.sync()` waits for its queued
work. Only for the tutorial yardstick (run.py); not torch_xla."""

import torch

import torch_neuronx  # noqa: F401  (registers the neuron device)


def device(index=None):
    return torch.device("neuron", 0 if index is None else index)


def sync(wait=False):
    torch.neuron.synchronize()
