"""attention-nki: fused attention forward as an NKI kernel, the PyTorch op
`attention` (autograd, torch.compile) and `flash_attn_forward`, an
attention function for Transformers' attention interface (Transformers
registers a kernel's `flash_attn_forward` when the kernel also has
`supports_flash_attn`, and gives it SDPA's masks):

    model = AutoModelForCausalLM.from_pretrained(
        ..., attn_implementation="torch-neuronx/attention-nki")

(with `LOCAL_KERNELS=torch-neuronx/attention-nki=<this repository>` when it
is not on the Hub). Causal LMs (with a KV cache, padded batches, static
caches: any SDPA mask) and encoders such as ViT.
"""

import torch
import torch.nn.functional as F

from ._kernel import attention_kernel, tile_sizes
from ._ops import add_op_namespace_prefix, ops

_MASKED = -1e30  # a masked score, finite so that a fully masked row stays finite


def _check(q, k, v, bias, causal):
    if q.dim() != 4 or k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(
            f"attention: expected q (B, H, Sq, D) and k, v (B, Hkv, Sk, D), got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[3] > 128:
        raise ValueError(
            f"attention: head_dim {q.shape[3]} > 128: the contraction of Q K^T must fit the "
            f"128 partitions of a NeuronCore; use attn_implementation='sdpa' for this model"
        )
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"attention: {q.shape[1]} query heads are not a multiple of {k.shape[1]} key/value heads")
    if causal and k.shape[2] < q.shape[2]:
        raise ValueError(f"attention: causal with fewer keys ({k.shape[2]}) than queries ({q.shape[2]})")
    if bias is not None and (
        bias.dim() != 4
        or bias.shape[2:] != (q.shape[2], k.shape[2])
        or bias.shape[0] not in (1, q.shape[0])
        or bias.shape[1] not in (1, q.shape[1])
    ):
        raise ValueError(
            f"attention: a mask must be (1 or B, 1 or H, Sq, Sk) = (.., .., {q.shape[2]}, "
            f"{k.shape[2]}), got {tuple(bias.shape)}"
        )


def _additive(bias):
    """A mask as the additive fp32 bias SDPA applies (True / 0 keeps)."""
    if bias.dtype == torch.bool:
        return torch.where(bias, 0.0, _MASKED).float()
    return bias.float().clamp(min=_MASKED)


@torch.library.custom_op(add_op_namespace_prefix("attention"), mutates_args=())
def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None, scale: float, causal: bool
) -> torch.Tensor:
    """softmax(q k^T * scale + mask [causal]) v for q (B, H, Sq, D), k and v
    (B, Hkv, Sk, D) and an optional mask (bool: True attends, or additive)
    of (1 or B, 1 or H, Sq, Sk), which then replaces `causal`; returns
    (B, Sq, H, D)."""
    _check(q, k, v, bias, causal)
    if bias is not None:
        qt, n_q, n_k = tile_sizes(q.shape[2], k.shape[2])
        scaled = _additive(bias) / scale  # the kernel adds it to Q K^T before the scale
        bias = F.pad(
            F.pad(scaled, (0, n_k * 128 - k.shape[2]), value=_MASKED / scale), (0, 0, 0, n_q * qt - q.shape[2])
        ).contiguous()
        causal = False
    return attention_kernel(q.contiguous(), k.to(q.dtype).contiguous(), v.to(q.dtype).contiguous(), bias, scale, causal)


@attention.register_fake
def _(q, k, v, bias, scale, causal):
    return q.new_empty(q.shape[0], q.shape[2], q.shape[1], q.shape[3])


def _reference_probs(q, k, bias, scale, causal):
    rep = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(rep, dim=1)
    s = (q.float() @ kf.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + _additive(bias)
    elif causal:
        sq, sk = q.shape[2], k.shape[2]
        keep = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        s = s.masked_fill(~keep, float("-inf"))
    return s.softmax(-1), kf


def _setup(ctx, inputs, output):
    q, k, v, bias, scale, causal = inputs
    ctx.save_for_backward(q, k, v, bias)
    ctx.scale, ctx.causal = scale, causal


def _backward(ctx, grad):
    # PyTorch backward: recompute the probabilities in fp32 (no stored P).
    q, k, v, bias = ctx.saved_tensors
    rep = q.shape[1] // k.shape[1]
    p, kf = _reference_probs(q, k, bias, ctx.scale, ctx.causal)
    vf = v.float().repeat_interleave(rep, dim=1)
    go = grad.float().transpose(1, 2)  # (B, H, Sq, D)
    gv = p.transpose(-1, -2) @ go
    gp = go @ vf.transpose(-1, -2)
    gs = p * (gp - (gp * p).sum(-1, keepdim=True)) * ctx.scale
    gq = gs @ kf
    gk = gs.transpose(-1, -2) @ q.float()

    def fold(g):  # sum the query heads sharing a key/value head
        return g.reshape(g.shape[0], -1, rep, *g.shape[2:]).sum(2)

    return gq.to(q.dtype), fold(gk).to(k.dtype), fold(gv).to(v.dtype), None, None, None


attention.register_autograd(_backward, setup_context=_setup)

supports_flash_attn = True


def flash_attn_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """Transformers' attention-function contract: query (B, H, Sq, D), key and
    value (B, Hkv, Sk, D), SDPA's mask (None, or bool / additive of
    (B, 1, Sq, Sk)); returns ((B, Sq, H, D), None)."""
    for name in ("softcap", "s_aux"):
        if kwargs.get(name) is not None:
            raise ValueError(
                f"attention-nki does not implement {name}; use attn_implementation='sdpa' or 'eager' for this model"
            )
    window = kwargs.get("sliding_window")
    if window is not None and attention_mask is None and key.shape[2] > window:
        raise ValueError(
            f"attention-nki got a sliding window of {window} over {key.shape[2]} keys without a "
            "mask; use attn_implementation='sdpa' for this model"
        )
    if dropout and module.training:
        raise ValueError(
            f"attention-nki has no attention dropout (got {dropout}); set the config's attention_dropout to 0.0"
        )
    if is_causal is None:
        is_causal = getattr(module, "is_causal", False)
    causal = bool(is_causal) and query.shape[2] > 1
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    return attention(query, key, value, attention_mask, float(scale), causal), None


from . import layers  # noqa: E402

__all__ = ["attention", "attention_kernel", "flash_attn_forward", "layers", "ops", "supports_flash_attn"]
