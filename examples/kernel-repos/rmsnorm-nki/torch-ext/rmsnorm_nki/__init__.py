"""rmsnorm-nki: RMSNorm as an NKI kernel, a PyTorch op `rmsnorm` (autograd,
torch.compile) and the layer `layers.RMSNorm` for `kernelize`."""

import torch

from ._kernel import rmsnorm_kernel
from ._ops import add_op_namespace_prefix, ops


@torch.library.custom_op(add_op_namespace_prefix("rmsnorm"), mutates_args=())
def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm over the last dimension of `x` (any leading shape), as
    Transformers computes it: `weight * normed.to(x.dtype)`, so fp32 weights
    with bf16 activations give fp32."""
    if x.shape[-1] != weight.shape[0]:
        raise ValueError(f"rmsnorm: x's last dimension {x.shape[-1]} differs from weight's {weight.shape[0]}")
    rows = x.reshape(-1, x.shape[-1])
    if not rows.is_contiguous():
        rows = rows.contiguous()
    return rmsnorm_kernel(rows, weight.contiguous(), eps).reshape(x.shape)


@rmsnorm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x, dtype=torch.promote_types(x.dtype, weight.dtype))


def _setup(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _backward(ctx, grad):
    # The backward is PyTorch: recompute the fp32 statistics, as the forward.
    x, weight = ctx.saved_tensors
    xf, gf = x.float(), grad.float()
    inv = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + ctx.eps)
    normed = xf * inv
    # the weight multiplied normed rounded to x's dtype; the rounding passes gradients through
    gw = (gf * normed.to(x.dtype).float()).reshape(-1, x.shape[-1]).sum(0).to(weight.dtype)
    gn = gf * weight.float()
    gx = inv * (gn - normed * (gn * normed).mean(-1, keepdim=True))
    return gx.to(x.dtype), gw, None


rmsnorm.register_autograd(_backward, setup_context=_setup)

from . import layers  # noqa: E402

__all__ = ["layers", "ops", "rmsnorm", "rmsnorm_kernel"]
