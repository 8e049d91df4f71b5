"""attention-nki: fused attention forward as an NKI kernel, the PyTorch op
`attention` (autograd, torch.compile) and `flash_attn_forward`, an
attention function for Transformers' attention interface (Transformers
registers a kernel's `flash_attn_forward` when the kernel also has
`supports_flash_attn`, and gives it SDPA's masks):

    model = AutoModelForCausalLM.from_pretrained(
        ..., attn_implementation="torch-neuronx/attention-nki")

(with `LOCAL_KERNELS=torch-neuronx/attention-nki=<this repository>` when it
is not on the Hub). Causal LMs (with a KV cache) and encoders such as ViT.
"""

import torch

from ._kernel import attention_kernel
from ._ops import add_op_namespace_prefix, ops


@torch.library.custom_op(add_op_namespace_prefix("attention"), mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, causal: bool) -> torch.Tensor:
    """softmax(q k^T * scale [causal]) v for q (B, H, Sq, D), k and v
    (B, Hkv, Sk, D); returns (B, Sq, H, D)."""
    if q.dim() != 4 or k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"attention: expected q (B, H, Sq, D) and k, v (B, Hkv, Sk, D), got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"attention: {q.shape[1]} query heads are not a multiple of {k.shape[1]} key/value heads")
    if causal and k.shape[2] < q.shape[2]:
        raise ValueError(f"attention: causal with fewer keys ({k.shape[2]}) than queries ({q.shape[2]})")
    v = v.to(q.dtype)
    return attention_kernel(q.contiguous(), k.to(q.dtype).contiguous(), v.contiguous(), scale, causal)


@attention.register_fake
def _(q, k, v, scale, causal):
    return q.new_empty(q.shape[0], q.shape[2], q.shape[1], q.shape[3])


def _reference_probs(q, k, scale, causal):
    rep = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(rep, dim=1)
    s = (q.float() @ kf.transpose(-1, -2)) * scale
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        keep = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        s = s.masked_fill(~keep, float("-inf"))
    return s.softmax(-1), kf


def _setup(ctx, inputs, output):
    q, k, v, scale, causal = inputs
    ctx.save_for_backward(q, k, v)
    ctx.scale, ctx.causal = scale, causal


def _backward(ctx, grad):
    # PyTorch backward: recompute the probabilities in fp32 (no stored P).
    q, k, v = ctx.saved_tensors
    rep = q.shape[1] // k.shape[1]
    p, kf = _reference_probs(q, k, ctx.scale, ctx.causal)
    vf = v.float().repeat_interleave(rep, dim=1)
    go = grad.float().transpose(1, 2)  # (B, H, Sq, D)
    gv = p.transpose(-1, -2) @ go
    gp = go @ vf.transpose(-1, -2)
    gs = p * (gp - (gp * p).sum(-1, keepdim=True)) * ctx.scale
    gq = gs @ kf
    gk = gs.transpose(-1, -2) @ q.float()

    def fold(g):  # sum the query heads sharing a key/value head
        return g.reshape(g.shape[0], -1, rep, *g.shape[2:]).sum(2)
    return gq.to(q.dtype), fold(gk).to(k.dtype), fold(gv).to(v.dtype), None, None


attention.register_autograd(_backward, setup_context=_setup)


supports_flash_attn = True


def flash_attn_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None,
                       **kwargs):
    """Transformers' attention-function contract: query (B, H, Sq, D), key and
    value (B, Hkv, Sk, D); returns ((B, Sq, H, D), None)."""
    if attention_mask is not None:
        raise ValueError("attention-nki handles causal and full attention without a padding mask; this batch "
                         "has padding. Pad-free batches (one sequence, or equal lengths) run the kernel; use "
                         "attn_implementation='sdpa' for padded batches.")
    if dropout and module.training:
        raise ValueError(f"attention-nki has no attention dropout (got {dropout}); set the config's "
                         "attention_dropout to 0.0")
    if is_causal is None:
        is_causal = getattr(module, "is_causal", False)
    causal = bool(is_causal) and query.shape[2] > 1
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    return attention(query, key, value, float(scale), causal), None


from . import layers  # noqa: E402

__all__ = ["attention", "attention_kernel", "flash_attn_forward", "layers", "ops", "supports_flash_attn"]
