"""torch_neuronx.trainium_estimate: ops run on neuron tensors are charged by
the per-op roofline of torch_neuronx.trainium, NKI kernels by their
instruction-level estimate, views nothing, CPU ops nothing."""

import pytest
import torch

import nki
import nki.language as nl
from torch_neuronx import trainium
from torch_neuronx.nki import last_estimate
from torch_neuronx.trainium_estimate import TrainiumEstimate


@nki.jit
def double(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out[:, :], value=nl.multiply(nl.load(x[:, :]), 2.0))
    return out


def test_a_matmul_is_charged_its_roofline_and_views_are_free():
    a = torch.randn(256, 512, device="neuron", dtype=torch.bfloat16)
    b = torch.randn(512, 384, device="neuron", dtype=torch.bfloat16)
    with TrainiumEstimate("trn2") as est:
        c = a @ b
        c.t(), c.view(-1), c[:, :8]
        torch.randn(4, 4) @ torch.randn(4, 4)  # CPU: not counted
    core = trainium.TRN2
    nbytes = (256 * 512 + 512 * 384 + 256 * 384) * 2
    expected = trainium.roofline_s(core, flops=2 * 256 * 512 * 384, hbm_bytes=nbytes) * 1e6
    assert set(est.by_op) == {"aten::mm"}
    assert est.by_op["aten::mm"] == [1, pytest.approx(expected)]
    assert expected > 2 * core.dma_fixed_latency_s * 1e6


def test_an_nki_kernel_is_charged_its_own_estimate():
    x = torch.randn(128, 64, device="neuron")
    with TrainiumEstimate() as est:
        double(x)
    assert est.by_op == {"nki::double": [1, pytest.approx(last_estimate().total_us)]}
    assert est.kernels_us == est.total_us > 0


def test_an_unknown_target_is_refused():
    with pytest.raises(ValueError, match="trn9"):
        TrainiumEstimate("trn9")


def test_kernels_estimated_for_another_target_are_flagged(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.warns(UserWarning, match="NEURON_PLATFORM_TARGET_OVERRIDE=trn2"):
        with TrainiumEstimate("trn2"):
            double(torch.randn(128, 64, device="neuron"))


def test_the_public_entry_point_reports_engines_and_ops():
    import torch_neuronx
    a = torch.randn(2048, 2048, device="neuron", dtype=torch.bfloat16)
    with torch_neuronx.estimate() as est:
        torch.nn.functional.silu(a @ a)  # a Tensor-bound matmul, an HBM-bound activation
        double(torch.randn(128, 64, device="neuron"))
    assert isinstance(est, TrainiumEstimate)
    mm = trainium.roofline_parts(trainium.TRN2, flops=2 * 2048 ** 3, hbm_bytes=3 * 2048 * 2048 * 2)
    assert est.by_engine["tensor"] == pytest.approx(mm["tensor"] * 1e6)
    assert est.by_engine["vector"] == pytest.approx(last_estimate().engine_us["vector"])
    fixed = 2 * trainium.TRN2.dma_fixed_latency_s * 1e6
    assert est.by_engine["dma"] >= 2 * fixed  # the two unfused ops' fixed DMA cost
    text = est.report()
    assert "aten::mm" in text and "nki::double" in text and f"{est.total_us:.1f} us" in text
