"""Prints which thread ran the backward of a neuron tensor: "caller" or
"other" (test_autograd_thread.py)."""

import threading

import torch

import torch_neuronx  # noqa: F401

seen = []
x = torch.ones(4, device="neuron", requires_grad=True)
y = (x * 2).sum()
x.register_hook(lambda g: seen.append(threading.get_ident()))
y.backward()
assert torch.equal(x.grad.cpu(), torch.full((4,), 2.0))
print("caller" if seen == [threading.get_ident()] else "other")
