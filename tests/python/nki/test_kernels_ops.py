"""The kernel repositories' ops against PyTorch, forward and backward, on the
shapes that take each kernel's other paths: tails and several tiles,
grouped-query and causal attention with past keys (a KV cache), SDPA's masks
(padding), RMSNorm's packed rows and fp32 weights on bf16 activations, and
bf16 within its rounding."""

import math

import pytest
import torch
import torch.nn.functional as F
from helpers import kernel_repos

kernels = pytest.importorskip("kernels")


@pytest.fixture(scope="module")
def k():
    repos = kernel_repos.built()
    return {name: kernels.get_local_kernel(path) for name, path in repos.items()}


def _pair(*shapes, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    cpu = [torch.randn(*s, generator=g).to(dtype).requires_grad_() for s in shapes]
    dev = [t.detach().to("neuron").requires_grad_() for t in cpu]
    return cpu, dev


def _check(ref_fn, op_fn, cpu, dev, tol=1e-5, grad_tol=1e-4):
    ref, out = ref_fn(*cpu), op_fn(*dev)
    torch.testing.assert_close(out.detach().cpu(), ref.detach(), rtol=tol, atol=tol)
    g = torch.randn(ref.shape, generator=torch.Generator().manual_seed(9)).to(ref.dtype)
    ref.backward(g)
    out.backward(g.to("neuron"))
    for a, b in zip(cpu, dev):
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=grad_tol, atol=grad_tol)


def _sdpa(q, k, v, mask=None, causal=False, scale=None):
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    if causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool).tril(k.shape[2] - q.shape[2])
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale).transpose(1, 2)


@pytest.mark.parametrize(
    "B, H, Hkv, Sq, Sk, D, causal",
    [
        (1, 4, 2, 200, 200, 32, True),  # two query and key tiles, GQA
        (2, 2, 1, 130, 300, 16, True),  # past keys: a prefill chunk after a cache
        (1, 2, 2, 1, 9, 16, True),  # decode
        (1, 3, 3, 197, 197, 64, False),  # ViT: the key tail
    ],
)
def test_attention(k, B, H, Hkv, Sq, Sk, D, causal):
    cpu, dev = _pair((B, H, Sq, D), (B, Hkv, Sk, D), (B, Hkv, Sk, D))
    op = k["attention-nki"].attention
    _check(
        lambda q, kk, v: _sdpa(q, kk, v, causal=causal), lambda q, kk, v: op(q, kk, v, None, D**-0.5, causal), cpu, dev
    )


@pytest.mark.parametrize("float_mask", [False, True])
def test_attention_with_a_padding_mask(k, float_mask):
    B, H, S, D = 2, 2, 140, 16
    keep = torch.ones(B, 1, S, S, dtype=torch.bool).tril()
    keep[1, :, :, :30] = False  # the second sequence is left-padded by 30
    keep[1, :, :30, :] = torch.eye(30, S, dtype=torch.bool)  # padded queries see themselves (no empty row)
    mask = torch.where(keep, 0.0, torch.finfo(torch.float32).min) if float_mask else keep
    cpu, dev = _pair((B, H, S, D), (B, H, S, D), (B, H, S, D))
    op = k["attention-nki"].attention
    _check(
        lambda q, kk, v: _sdpa(q, kk, v, mask=mask),
        lambda q, kk, v: op(q, kk, v, mask.to("neuron"), D**-0.5, True),
        cpu,
        dev,
    )


def test_attention_refuses_what_it_does_not_do(k):
    op = k["attention-nki"].attention
    q = torch.randn(1, 1, 4, 256, device="neuron")
    with pytest.raises(ValueError, match="head_dim 256 > 128"):
        op(q, q, q, None, 0.0625, True)
    q = torch.randn(1, 3, 4, 16, device="neuron")
    with pytest.raises(ValueError, match="3 query heads are not a multiple of 2"):
        op(q, torch.randn(1, 2, 4, 16, device="neuron"), torch.randn(1, 2, 4, 16, device="neuron"), None, 0.25, True)


def _rmsnorm(x, w, eps=1e-6):  # Transformers' LlamaRMSNorm
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


@pytest.mark.parametrize("shape", [(2048, 64), (200, 64), (3, 7, 128), (1, 512)])
def test_rmsnorm(k, shape):
    cpu, dev = _pair(shape, shape[-1:])
    _check(_rmsnorm, lambda x, w: k["rmsnorm-nki"].rmsnorm(x, w, 1e-6), cpu, dev)


def test_rmsnorm_bf16_activations_with_fp32_weights(k):
    cpu, dev = _pair((256, 64), dtype=torch.bfloat16)
    w = torch.randn(64)
    out = k["rmsnorm-nki"].rmsnorm(dev[0], w.to("neuron"), 1e-6)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.detach().cpu(), _rmsnorm(cpu[0].detach(), w), rtol=1e-5, atol=1e-5)


def test_silu_and_mul(k):
    cpu, dev = _pair((3, 70, 96))
    mod = k["silu-and-mul-nki"]
    _check(lambda x: F.silu(x[..., :48]) * x[..., 48:], mod.silu_and_mul, cpu, dev)
    cpu, dev = _pair((130, 1408))
    _check(F.silu, mod.silu, cpu, dev)


def test_vit_ops(k):
    mod = k["vit-nki"]
    cpu, dev = _pair((197, 96), (96,), (96,))
    _check(
        lambda x, w, b: F.layer_norm(x, (96,), w, b, 1e-12), lambda x, w, b: mod.layer_norm(x, w, b, 1e-12), cpu, dev
    )
    cpu, dev = _pair((130, 64), (300, 64), (300,))
    _check(lambda x, w, b: F.gelu(F.linear(x, w, b)), mod.linear_gelu, cpu, dev)
    cpu, dev = _pair((5, 33))
    _check(F.gelu, mod.gelu, cpu, dev)


def test_bf16_within_its_rounding(k):
    cpu, dev = _pair((1, 4, 200, 32), (1, 2, 200, 32), (1, 2, 200, 32), dtype=torch.bfloat16)
    out = k["attention-nki"].attention(*dev, None, 32**-0.5, True)
    ref = _sdpa(*[t.detach().float() for t in cpu], causal=True)
    torch.testing.assert_close(out.float().cpu(), ref, rtol=2e-2, atol=2e-2)
    cpu, dev = _pair((197, 768), (768,), (768,), dtype=torch.bfloat16)
    out = k["vit-nki"].layer_norm(*dev, 1e-12)
    x, w, b = (t.detach().float() for t in cpu)
    ref = F.layer_norm(x, (768,), w, b, 1e-12)
    torch.testing.assert_close(out.float().cpu(), ref, rtol=2e-2, atol=math.ldexp(1, -5))
