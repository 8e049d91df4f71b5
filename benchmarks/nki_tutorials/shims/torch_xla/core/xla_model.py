"""`torch_xla.core.xla_model` as the older tutorial drivers use it:
`xla_device()` and `mark_step()`, on the `neuron` device."""

import torch_xla


def xla_device(n=None, devkind=None):
    return torch_xla.device(n)


def mark_step(wait=False):
    torch_xla.sync(wait)
