"""Layers for `kernels.kernelize` (stateless; the forward of the layer they
replace)."""

import torch
import torch.nn as nn

from .. import silu, silu_and_mul


class SiLU(nn.Module):
    """Replaces Transformers' `SiLU` activation (`ACT2FN["silu"]`)."""

    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return silu(input)


class SiluAndMul(nn.Module):
    """silu(x[..., :d]) * x[..., d:], for models that keep gate and up in one
    projection."""

    can_torch_compile = True
    has_backward = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return silu_and_mul(x)


__all__ = ["SiLU", "SiluAndMul"]
