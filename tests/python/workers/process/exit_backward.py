"""A first backward on neuron, then exit (test_exit.py). argv[1] (a store path) is unused."""

import torch

import torch_neuronx  # noqa: F401

x = torch.ones(64, device="neuron", requires_grad=True)
(x * 2).sum().backward()
