"""silu-and-mul-nki: SwiGLU activations as NKI kernels, the PyTorch ops
`silu` and `silu_and_mul` (autograd, torch.compile), and the layers
`layers.SiLU` (Transformers' `SiLU`, Llama/Qwen3/Mistral's MLP activation)
and `layers.SiluAndMul` (the fused form, named as in kernels-community's
`activation`)."""

import torch

from ._kernel import silu_and_mul_kernel, silu_kernel
from ._ops import add_op_namespace_prefix, ops


def _rows(x: torch.Tensor) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1]) if x.dim() else x.reshape(1, 1)
    return rows if rows.is_contiguous() else rows.contiguous()


@torch.library.custom_op(add_op_namespace_prefix("silu"), mutates_args=())
def silu(x: torch.Tensor) -> torch.Tensor:
    """x * sigmoid(x), any shape."""
    return silu_kernel(_rows(x)).reshape(x.shape)


@silu.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op(add_op_namespace_prefix("silu_and_mul"), mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """silu(x[..., :d]) * x[..., d:] for x[..., 2d]."""
    if x.shape[-1] % 2:
        raise ValueError(f"silu_and_mul: the last dimension must be even (gate and up halves), got {x.shape[-1]}")
    return silu_and_mul_kernel(_rows(x)).reshape(*x.shape[:-1], x.shape[-1] // 2)


@silu_and_mul.register_fake
def _(x):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


def _silu_grad(xf):
    s = torch.sigmoid(xf)
    return s * (1 + xf * (1 - s))


def _save_input(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _silu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return (grad.float() * _silu_grad(x.float())).to(x.dtype)


def _silu_and_mul_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    gate, up = x.float().chunk(2, dim=-1)
    g = grad.float()
    return torch.cat([g * up * _silu_grad(gate), g * torch.nn.functional.silu(gate)], dim=-1).to(x.dtype)


silu.register_autograd(_silu_backward, setup_context=_save_input)
silu_and_mul.register_autograd(_silu_and_mul_backward, setup_context=_save_input)

from . import layers  # noqa: E402

__all__ = ["layers", "ops", "silu", "silu_and_mul", "silu_kernel", "silu_and_mul_kernel"]
