"""AWS's tutorial kernels (examples/nki, AWS's code unchanged) on `neuron`
tensors against the same math in PyTorch on the CPU: bitwise where the math
is the same (elementwise ops, fp32 accumulation), within the dtype's
rounding otherwise. Each prints its Trainium2 estimate."""

import importlib

import pytest
import torch

import torch_neuronx
from examples.nki import attention, layernorm, matmul, rmsnorm, softmax, tensor_add


def _estimate():
    e = torch_neuronx.nki.last_estimate()
    assert e is not None and e.total_us > 0 and e.bottleneck in e.engine_us
    print(e)
    return e


def test_tensor_add_spmd_grid_is_bitwise():
    torch.manual_seed(0)
    a, b = torch.rand(256, 1024, dtype=torch.bfloat16), torch.rand(256, 1024, dtype=torch.bfloat16)
    out = tensor_add.nki_tensor_add(a.neuron(), b.neuron())
    assert out.device.type == "neuron"
    assert torch.equal(out.cpu(), a + b)
    assert _estimate().instructions["dma"] == 12  # 4 grid instances x (2 loads + 1 store)


def test_tensor_add_nisa_style_is_bitwise(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")  # AWS's sample sets it at import
    mod = importlib.import_module("examples.nki.tensor_add_nisa")
    a, b = torch.randn(256, 1024), torch.randn(256, 1024)
    assert torch.equal(mod.nki_tensor_add(a.neuron(), b.neuron()).cpu(), a + b)
    assert _estimate().target == "trn1"


@pytest.mark.parametrize(
    "kernel",
    ["nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_", "nki_matmul_fully_optimized_"],
)
def test_matmul_tutorial_kernels_match_fp32_accumulation(kernel):
    torch.manual_seed(0)
    M, K, N = (2048, 1024, 1024) if kernel == "nki_matmul_fully_optimized_" else (256, 512, 1024)
    lhs, rhs = torch.rand(M, K, dtype=torch.bfloat16), torch.rand(K, N, dtype=torch.bfloat16)
    out = getattr(matmul, kernel)(lhs.neuron().T, rhs.neuron())  # the tutorial passes lhs.T, a strided view
    ref = (lhs.float() @ rhs.float()).bfloat16()
    torch.testing.assert_close(out.cpu().float(), ref.float(), rtol=1e-2, atol=1e-4)
    e = _estimate()
    assert e.flops == 2 * M * N * K


def test_matmul_basic_is_bitwise_in_fp32():
    lhs, rhs = torch.rand(64, 128), torch.rand(128, 512)
    out = matmul.nki_matmul_basic_(lhs.neuron().T, rhs.neuron())
    assert torch.equal(out.cpu(), torch.mm(lhs, rhs))


def test_softmax_with_masked_tail_tile():
    torch.manual_seed(0)
    x = torch.randn(300, 1000)
    out = softmax.nki_softmax_kernel(x.neuron())
    torch.testing.assert_close(out.cpu(), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    _estimate()


def test_rmsnorm_tutorial():
    torch.manual_seed(0)
    a, g = torch.rand(250, 512), torch.rand(512)
    out = rmsnorm.nki_rmsnorm_kernel(a.neuron(), g.neuron())
    torch.testing.assert_close(out.cpu(), rmsnorm.reference(a, g), rtol=1e-5, atol=1e-6)
    _estimate()


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_layernorm_tutorial(version):
    torch.manual_seed(0)
    x, gamma, beta = torch.rand(300, 1000), torch.rand(1000), torch.rand(1000)
    kernel = getattr(layernorm, f"nki_layernorm_kernel_{version}")
    out = kernel(x.neuron(), 1e-5, gamma.neuron(), beta.neuron())
    torch.testing.assert_close(out.cpu(), layernorm.reference(x, 1e-5, gamma, beta), rtol=1e-4, atol=1e-5)
    _estimate()


@pytest.mark.parametrize("causal", [False, True])
def test_fused_self_attention_forward(causal):
    torch.manual_seed(0)
    seqlen = 1024 if causal else 4096  # the tutorial's size and tolerance; the causal mask is our addition
    q, k, v = (torch.rand(seqlen, 64) for _ in range(3))
    out = attention.fused_self_attn_for_SD_small_head_size(q.neuron(), k.neuron(), v.neuron(), use_causal_mask=causal)
    # the kernel's mixed precision: bf16 matmul operands, so bf16 rounding of v shows in rows that average few values
    tol = dict(rtol=1e-2, atol=4e-3) if causal else dict(rtol=1e-3, atol=1e-5)
    torch.testing.assert_close(out.cpu(), attention.reference(q, k, v, causal), **tol)
    e = _estimate()
    assert e.instructions["tensor"] > 0 and e.instructions["scalar"] > 0


@pytest.mark.parametrize("kernel", ["attn_fwd_v1", "attn_fwd_v2"])
def test_attention_tutorial_v1_v2(kernel):
    torch.manual_seed(0)
    q, k, v = ((torch.rand(128, 128) * 2 - 1) for _ in range(3))
    out = getattr(attention, kernel)(q.neuron(), k.neuron(), v.neuron())
    torch.testing.assert_close(out.cpu(), attention.reference_attn_fwd(q, k, v), rtol=1e-2, atol=1e-2)
