"""The project's NKI kernels (examples/nki, in the dst-first language of
AWS's current NKI) on `neuron` tensors against PyTorch on the CPU, at shapes
with partial tiles, in fp32 and bf16; each records a Trainium2 estimate."""

import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import accumulation_tolerance

import torch_neuronx
from examples.nki import add, attention, layernorm, matmul, rmsnorm, softmax


def _estimate():
    e = torch_neuronx.nki.last_estimate()
    assert e is not None and e.total_us > 0 and e.bottleneck in e.engine_us
    return e


def _neuron(*tensors):
    return [t.to("neuron") for t in tensors]


@pytest.mark.parametrize("shape", [(256, 1024), (300, 1000), (1, 7)])
def test_add_is_bitwise(shape):
    a, b = torch.randn(shape), torch.randn(shape)
    out = add.add(*_neuron(a, b))
    assert out.device.type == "neuron"
    assert torch.equal(out.cpu(), a + b)
    tiles = -(-shape[0] // 128) * -(-shape[1] // 512)
    assert _estimate().instructions["dma"] == 3 * tiles


def test_add_refuses_mismatched_shapes():
    with pytest.raises(AssertionError, match="one shape"):
        add.add(*_neuron(torch.ones(4, 4), torch.ones(4, 5)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_matmul_matches_fp32_accumulation(dtype):
    torch.manual_seed(0)
    M, K, N = 256, 384, 1024
    a, b = torch.rand(M, K, dtype=dtype), torch.rand(K, N, dtype=dtype)
    out = matmul.matmul(a.to("neuron").T, b.to("neuron"))  # a strided K-major view, as a caller passes a.T
    torch.testing.assert_close(out.cpu(), matmul.reference(a.T, b), **accumulation_tolerance(K, dtype))
    assert _estimate().flops == 2 * M * N * K


def test_matmul_refuses_a_shape_off_the_tile_grid():
    with pytest.raises(AssertionError, match="multiples of 128, 128, 512"):
        matmul.matmul(*_neuron(torch.ones(128, 100), torch.ones(128, 512)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_softmax_with_a_partial_tile(dtype):
    torch.manual_seed(0)
    x = (torch.randn(300, 1000) * 4).to(dtype)
    out = softmax.softmax(x.to("neuron"))
    torch.testing.assert_close(out.cpu(), softmax.reference(x))
    e = _estimate()
    assert [i[0] for i in e.timeline].count("activation") == 3  # one exp-and-sum pass per row tile
    reduce_us = [i[3] for i in e.timeline if i[0] == "tensor_reduce"]
    assert len(reduce_us) == 3 and reduce_us[0] > 1000 / 1.4e9 * 1e6  # the row maximum reads 1000 elements


def test_rmsnorm_on_one_core():
    torch.manual_seed(0)
    x, gamma = torch.randn(300, 1024), torch.rand(1024)
    out = rmsnorm.rmsnorm(*_neuron(x, gamma))
    torch.testing.assert_close(out.cpu(), rmsnorm.reference(x, gamma))
    assert _estimate().cores == 1


def test_rmsnorm_lnc2_splits_rows_over_two_cores():
    torch.manual_seed(0)
    x, gamma = torch.randn(1024, 2048, dtype=torch.bfloat16), torch.rand(1, 2048, dtype=torch.bfloat16)
    one = rmsnorm.rmsnorm(*_neuron(x, gamma))
    single = _estimate()
    two = rmsnorm.rmsnorm[2](*_neuron(x, gamma))
    lnc2 = _estimate()
    torch.testing.assert_close(two.cpu(), rmsnorm.reference(x, gamma))
    assert torch.equal(one.cpu(), two.cpu())
    # the same instructions, split evenly over two cores that run at once
    assert lnc2.cores == 2 and lnc2.instructions["vector"] == single.instructions["vector"]
    assert 0.45 < lnc2.total_us / single.total_us < 0.6
    assert "LNC=2" in str(lnc2)
    rmsnorm.rmsnorm[nl.nc(2)](*_neuron(x, gamma))  # AWS's other spelling of kernel[2]
    assert _estimate().total_us == lnc2.total_us


def test_a_grid_that_is_not_lnc_runs_on_one_core():
    x, gamma = torch.randn(256, 512), torch.rand(512)
    rmsnorm.rmsnorm[3](*_neuron(x, gamma))  # three programs: an SPMD grid, one after another
    assert _estimate().cores == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_layernorm_combines_bn_stats_chunks(dtype):
    torch.manual_seed(0)
    x, gamma, beta = torch.randn(200, 1300).to(dtype), torch.rand(1300).to(dtype), torch.rand(1300).to(dtype)
    out = layernorm.layernorm(*_neuron(x, gamma, beta))
    tol = {} if dtype == torch.float32 else dict(rtol=1.6e-2, atol=2e-2)  # one bf16 rounding of x*gamma
    torch.testing.assert_close(out.cpu(), layernorm.reference(x, gamma, beta), **tol)
    assert _estimate().instructions["vector"] > 0


@pytest.mark.parametrize("causal", [False, True])
def test_attention_fp32(causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(640, 64) for _ in range(3))
    out = attention.attention(*_neuron(q, k, v), causal=causal)
    torch.testing.assert_close(out.cpu(), attention.reference(q, k, v, causal), rtol=1e-4, atol=1e-5)
    e = _estimate()
    assert e.bottleneck == "tensor" or e.instructions["tensor"] > 0
    if causal:
        assert e.instructions["gpsimd"] == 640 // 128  # one affine_select per diagonal block


def test_attention_bf16_matmul_operands():
    torch.manual_seed(0)
    q, k, v = (torch.randn(512, 128, dtype=torch.bfloat16) for _ in range(3))
    out = attention.attention(*_neuron(q, k, v), causal=True)
    torch.testing.assert_close(out.cpu(), attention.reference(q, k, v, True), rtol=2e-2, atol=2e-2)
