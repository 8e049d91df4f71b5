"""Layers for `kernels.kernelize`: stateless, the forward of the layer they
replace reads its attributes (`weight`, `variance_epsilon`)."""

import torch
import torch.nn as nn

from .. import rmsnorm


class RMSNorm(nn.Module):
    """Replaces Transformers' `RMSNorm` layers (Llama, Qwen3, Mistral, ...)."""

    can_torch_compile = True  # one custom op: no graph break
    has_backward = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return rmsnorm(hidden_states, self.weight, self.variance_epsilon)


__all__ = ["RMSNorm"]
