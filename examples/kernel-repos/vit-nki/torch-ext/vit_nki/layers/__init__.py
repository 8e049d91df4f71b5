"""Layers for `kernelize`. Stateless: each forward reads the attributes of
the layer it replaces.

- `GeLU`: Transformers' `GeLU` activation (decorated in Transformers, so
  `kernels.kernelize` swaps it with a plain mapping).
- `ViTMLP` (fc1 + GELU fused, then fc2; another `hidden_act` keeps the
  unfused path) and `ViTLayer` (both layer norms as
  kernels; attention and MLP through the layer's own modules, which may be
  kernels too): ViT's classes are not decorated, so these come with
  `ViTMLPLayout` / `ViTLayerLayout`, the classes Transformers patches in for
  `from_pretrained(..., kernel_config=KernelConfig({"ViTMLP": ...,
  "ViTLayer": ...}))`. A layout keeps the original's parameters and forward
  (so the state dict and a fallback are unchanged); `kernelize` then swaps
  in the kernel forward.
"""

import torch
import torch.nn as nn

from .. import gelu, layer_norm, linear_gelu


class GeLU(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return gelu(input)


class ViTMLP(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if type(self.activation_fn).__name__ != "GELUActivation":  # the kernel's GELU is the erf form
            return self.fc2(self.activation_fn(self.fc1(hidden_states)))
        hidden_states = linear_gelu(hidden_states, self.fc1.weight, self.fc1.bias)
        return self.fc2(hidden_states)


class ViTLayer(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        ln = self.layernorm_before
        residual = hidden_states
        hidden_states = layer_norm(hidden_states, ln.weight, ln.bias, ln.eps)
        hidden_states, _ = self.attention(hidden_states, attention_mask, **kwargs)
        hidden_states = self.dropout(hidden_states) + residual
        ln = self.layernorm_after
        residual = hidden_states
        hidden_states = self.mlp(layer_norm(hidden_states, ln.weight, ln.bias, ln.eps))
        return self.dropout(hidden_states) + residual


__all__ = ["GeLU", "ViTLayer", "ViTMLP"]

try:
    from transformers.models.vit import modeling_vit as _vit
except ImportError:  # the layouts only matter to Transformers
    pass
else:

    class ViTMLPLayout(_vit.ViTMLP):
        forward = _vit.ViTMLP.forward

    class ViTLayerLayout(_vit.ViTLayer):
        forward = _vit.ViTLayer.forward

    __all__ += ["ViTLayerLayout", "ViTMLPLayout"]
