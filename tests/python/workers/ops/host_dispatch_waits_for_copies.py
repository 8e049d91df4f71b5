"""Data-dependent host-dispatched ops (nonzero, masked_select) wait for a
queued copy in thread mode (test_host_dispatch.py)."""

import torch

x = (torch.arange(1 << 16) % 7 == 0).float().pin_memory()  # so the copy is queued
for _ in range(20):
    d = x.to("neuron", non_blocking=True)
    assert d.nonzero().numel() == int(x.sum().item()), "nonzero ran before the copy"
    assert torch.masked_select(d, d > 0).numel() == int(x.sum().item())
    assert d.sum().item() == x.sum().item() and d.tolist()[:8] == x.tolist()[:8]
