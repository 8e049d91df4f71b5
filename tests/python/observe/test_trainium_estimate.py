"""torch_neuronx.estimation.step: ops run on neuron tensors are charged by
the per-op roofline of torch_neuronx.trainium, NKI kernels by their
instruction-level estimate, views nothing, CPU ops nothing."""

import nki
import nki.language as nl
import pytest
import torch

from torch_neuronx import trainium
from torch_neuronx.estimation.step import TrainiumEstimate
from torch_neuronx.nki import last_estimate


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

    n = 1024  # Tensor-bound on Trainium2 at this size, and seconds here (2048 took a minute of bf16 on the CPU)
    a = torch.randn(n, n, device="neuron", dtype=torch.bfloat16)
    with torch_neuronx.estimate() as est:
        torch.nn.functional.silu(a @ a)  # a Tensor-bound matmul, an HBM-bound activation
        double(torch.randn(128, 64, device="neuron"))
    assert isinstance(est, TrainiumEstimate)
    mm = trainium.roofline_parts(trainium.TRN2, flops=2 * n**3, hbm_bytes=3 * n * n * 2)
    assert mm["tensor"] > mm["dma"]
    assert est.by_engine["tensor"] == pytest.approx(mm["tensor"] * 1e6)
    assert est.by_engine["vector"] == pytest.approx(last_estimate().engine_us["vector"])
    fixed = 2 * trainium.TRN2.dma_fixed_latency_s * 1e6
    assert est.by_engine["dma"] >= 2 * fixed  # the two unfused ops' fixed DMA cost
    text = est.report()
    assert "aten::mm" in text and "nki::double" in text and f"{est.total_us:.1f} us" in text


_COLLECTIVES_WORKER = """
import pytest, torch, torch.distributed as dist
from helpers.rank import RANK, WORLD, init
from torch_neuronx import trainium
from torch_neuronx.estimation.collectives import collective_s
from torch_neuronx.estimation.step import TrainiumEstimate

init()
torch.neuron.set_device(RANK % torch.neuron.device_count())
x = torch.ones(1 << 18, device="neuron")  # 1 MiB of fp32
with TrainiumEstimate("trn2") as est:
    dist.all_reduce(x)
    dist.all_gather_into_tensor(torch.empty(WORLD << 18, device="neuron"), x)
    dist.reduce_scatter_tensor(torch.empty((1 << 18) // WORLD, device="neuron"), x)
    dist.barrier()
    (dist.send if RANK == 0 else dist.recv)(x, 1 - RANK)
    x + 1  # an aten op beside them
expected = {"c10d::allreduce_": ("all_reduce", 1 << 20), "c10d::_allgather_base_": ("all_gather", WORLD << 20),
            "c10d::_reduce_scatter_base_": ("reduce_scatter", 1 << 20), "c10d::barrier": ("barrier", 0),
            "c10d::send" if RANK == 0 else "c10d::recv_": ("send" if RANK == 0 else "recv", 1 << 20)}
for op, (kind, nbytes) in expected.items():
    assert est.by_op[op] == [1, pytest.approx(collective_s(trainium.TRN2, kind, nbytes, WORLD) * 1e6)], op
assert set(est.by_op) == set(expected) | {"aten::add"}, est.by_op
assert est.by_engine["collective"] == pytest.approx(sum(est.by_op[op][1] for op in expected))
assert est.by_op["c10d::allreduce_"][1] > est.by_op["c10d::barrier"][1] > 0
print("estimated", dict(est.by_op))
dist.destroy_process_group()
"""


def test_c10d_collectives_are_charged_by_the_collective_model(tmp_path):
    # Real processes on the neuron backend: the ops torch.distributed
    # dispatches to (c10d::allreduce_, ...) reach the mode with neuron tensors
    # and the process group as a ScriptObject, whose size is the world.
    from helpers.dist_launch import launch_ok

    worker = tmp_path / "estimate_collectives.py"
    worker.write_text(_COLLECTIVES_WORKER)
    launch_ok(worker, 2, tmp_path, expect="estimated", timeout=60)


def test_the_collective_model_follows_sizes_and_levels():
    from torch_neuronx.estimation.collectives import KINDS, collective_s

    core = trainium.TRN2
    with pytest.raises(ValueError, match="'allreduce'.*all_reduce"):
        collective_s(core, "allreduce", 1, 2)
    assert all(collective_s(core, kind, 1 << 20, 1) == 0.0 for kind in KINDS)
    big = 512 << 20
    # all_reduce moves twice all_gather's bus bytes; across chips and across
    # instances costs at least as much as within a chip
    assert collective_s(core, "all_reduce", big, 4) > 1.9 * collective_s(core, "all_gather", big, 4)
    assert (
        collective_s(core, "all_reduce", big, 4)
        <= collective_s(core, "all_reduce", big, 64)
        <= collective_s(core, "all_reduce", big, 128)
    )
    # a small message pays hops, not bandwidth: one Mesh step per phase within an instance
    assert collective_s(core, "all_reduce", 64, 64) == pytest.approx(2 * trainium.HOP_LATENCY_INTRA_S, rel=1e-3)
    assert collective_s(core, "all_reduce", 64, 128) == pytest.approx(
        2 * (trainium.HOP_LATENCY_INTRA_S + trainium.HOP_LATENCY_INTER_S), rel=1e-3
    )
    with pytest.raises(ValueError, match="trn2.3xlarge has no published EFA"):
        collective_s(core, "all_reduce", 64, 8, instance="trn2.3xlarge")
