"""vit-nki: the fused kernels of a Vision Transformer layer as NKI kernels,
the PyTorch ops `layer_norm`, `linear_gelu` and `gelu` (autograd,
torch.compile), and layers for `kernelize`: `GeLU` (Transformers' decorated
activation), `ViTMLP` and `ViTLayer` (with the `...Layout` classes
Transformers' `KernelConfig` patches in). Attention comes from
attention-nki's `flash_attn_forward` through `attn_implementation`."""

import math

import torch

from ._kernels import W_T_SBUF_BYTES, gelu_kernel, layer_norm_kernel, linear_gelu_kernel
from ._ops import add_op_namespace_prefix, ops


def _rows(x: torch.Tensor) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1])
    return rows if rows.is_contiguous() else rows.contiguous()


@torch.library.custom_op(add_op_namespace_prefix("layer_norm"), mutates_args=())
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    """Layer norm over the last dimension, with weight and bias."""
    return layer_norm_kernel(_rows(x), weight.contiguous(), bias.contiguous(), eps).reshape(x.shape)


@layer_norm.register_fake
def _(x, weight, bias, eps):
    return torch.empty_like(x)


@torch.library.custom_op(add_op_namespace_prefix("linear_gelu"), mutates_args=())
def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """gelu(x @ weight.T + bias): nn.Linear then GELU, in one kernel."""
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear_gelu: x's last dimension {x.shape[-1]} differs from weight's {weight.shape[1]}")
    if weight.numel() * x.element_size() > W_T_SBUF_BYTES * 128:
        raise ValueError(
            f"linear_gelu: the weight {tuple(weight.shape)} in {x.dtype} needs "
            f"{weight.numel() * x.element_size() // 128 // 1024} KiB per SBUF partition, over the "
            f"kernel's {W_T_SBUF_BYTES // 1024} KiB; split the projection or use nn.Linear + GELU"
        )
    w = weight.to(x.dtype).contiguous()
    out = linear_gelu_kernel(_rows(x), w, bias.contiguous())
    return out.reshape(*x.shape[:-1], weight.shape[0])


@linear_gelu.register_fake
def _(x, weight, bias):
    return x.new_empty(*x.shape[:-1], weight.shape[0])


@torch.library.custom_op(add_op_namespace_prefix("gelu"), mutates_args=())
def gelu(x: torch.Tensor) -> torch.Tensor:
    """x * Phi(x), the erf form."""
    return gelu_kernel(_rows(x) if x.dim() else x.reshape(1, 1)).reshape(x.shape)


@gelu.register_fake
def _(x):
    return torch.empty_like(x)


def _gelu_grad(xf):
    return 0.5 * (1 + torch.erf(xf / math.sqrt(2))) + xf * torch.exp(-0.5 * xf * xf) / math.sqrt(2 * math.pi)


# Backward passes are PyTorch, recomputing what the forward kernel did not keep.
def _save_all(ctx, inputs, output):
    ctx.save_for_backward(*[t for t in inputs if isinstance(t, torch.Tensor)])
    ctx.scalars = [t for t in inputs if not isinstance(t, torch.Tensor)]


def _layer_norm_backward(ctx, grad):
    x, w, b = ctx.saved_tensors
    (eps,) = ctx.scalars
    xf = x.float()
    mean = xf.mean(-1, keepdim=True)
    inv = torch.rsqrt(xf.var(-1, unbiased=False, keepdim=True) + eps)
    normed = (xf - mean) * inv
    gf = grad.float()
    gn = gf * w.float()
    gx = inv * (gn - gn.mean(-1, keepdim=True) - normed * (gn * normed).mean(-1, keepdim=True))
    flat = x.shape[-1]
    return (
        gx.to(x.dtype),
        (gf * normed).reshape(-1, flat).sum(0).to(w.dtype),
        gf.reshape(-1, flat).sum(0).to(b.dtype),
        None,
    )


def _linear_gelu_backward(ctx, grad):
    x, w, b = ctx.saved_tensors
    pre = x.float() @ w.float().t() + b.float()
    gp = grad.float() * _gelu_grad(pre)
    flat = gp.reshape(-1, gp.shape[-1])
    gw = flat.t() @ x.float().reshape(-1, x.shape[-1])
    return (gp @ w.float()).to(x.dtype), gw.to(w.dtype), flat.sum(0).to(b.dtype)


def _gelu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return (grad.float() * _gelu_grad(x.float())).to(x.dtype)


layer_norm.register_autograd(_layer_norm_backward, setup_context=_save_all)
linear_gelu.register_autograd(_linear_gelu_backward, setup_context=_save_all)
gelu.register_autograd(_gelu_backward, setup_context=_save_all)

from . import layers  # noqa: E402

__all__ = [
    "gelu",
    "gelu_kernel",
    "layer_norm",
    "layer_norm_kernel",
    "layers",
    "linear_gelu",
    "linear_gelu_kernel",
    "ops",
]
