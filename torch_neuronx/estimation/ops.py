"""The estimated-Trainium2 track of neuron traces: the Kineto session
(csrc/profiler/NeuronKinetoProfiler.cpp) hands the activities it recorded
(depth 0: what the caller asked for) to `estimate_activities` when a
torch.profiler session stops, and draws the results beside the measured
device track. Same cost model as torch_neuronx.estimate(): the per-op
roofline of torch_neuronx.trainium for ops, DMA for copies, the collective
model for c10d calls; NKI kernels and compiled graphs arrive estimated.

Input: dicts with kind, name, bytes, dtype, in_shapes, out_shapes, world
(see csrc/bindings/TraceBindings.cpp). Output: one (microseconds, engine)
per activity."""

from __future__ import annotations

import math

from .. import trainium
from . import collectives as tc

TARGET = "trn2"  # the track's name says Trainium2

# Transcendentals run on the Scalar engine's lookup tables; other elementwise
# work on the Vector engine.
SCALAR_OPS = {
    "exp",
    "log",
    "sigmoid",
    "silu",
    "gelu",
    "tanh",
    "rsqrt",
    "sqrt",
    "erf",
    "sin",
    "cos",
    "pow",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "reciprocal",
    "exp2",
    "log1p",
    "expm1",
    "silu_backward",
    "gelu_backward",
    "_softmax_backward_data",
    "sigmoid_backward",
    "tanh_backward",
}


def op_bound(core, name: str, *, flops: float, nbytes: float, elements: float, fp32: bool) -> tuple[str, float]:
    """The resource that bounds one op run alone on `core` and its seconds
    there (trainium.roofline_parts: operands through HBM, FLOPs on the Tensor
    engine, elementwise work on the Vector or Scalar engine)."""
    short = name.split("::")[-1].split(".")[0].rstrip("_")
    engine = "scalar" if short in SCALAR_OPS else "vector"
    parts = trainium.roofline_parts(
        core, flops=flops, hbm_bytes=nbytes, elements=0 if flops else elements, engine=engine, fp32_matmul=fp32
    )
    bound = max(parts, key=parts.get)
    return bound, parts[bound]


def op_cost(core, name: str, *, flops: float, nbytes: float, elements: float, fp32: bool) -> tuple[float, str]:
    """One op run alone on `core`: (seconds, the resource that bounds it),
    the bound plus one DMA in and out."""
    bound, seconds = op_bound(core, name, flops=flops, nbytes=nbytes, elements=elements, fp32=fp32)
    return seconds + 2 * core.dma_fixed_latency_s, bound


def _prod(shape) -> int:
    return math.prod(shape) if shape else 1


def shape_flops(name: str, ins: list, outs: list) -> float:
    """Matmul-family FLOPs from argument shapes (the Tensor engine's work)."""
    from torch.utils import flop_counter as fc

    op = name.split("::")[-1].split(".")[0]
    try:
        if op == "mm" and len(ins) >= 2:
            return fc.mm_flop(ins[0], ins[1])
        if op == "addmm" and len(ins) >= 3:
            return fc.addmm_flop(ins[0], ins[1], ins[2])
        if op == "bmm" and len(ins) >= 2:
            return fc.bmm_flop(ins[0], ins[1])
        if op == "baddbmm" and len(ins) >= 3:
            return fc.baddbmm_flop(ins[0], ins[1], ins[2])
        if op in ("convolution_overrideable", "convolution", "_convolution") and len(ins) >= 2 and outs:
            return 2 * _prod(outs[0]) * _prod(ins[1][1:])
        if op == "convolution_backward_overrideable" and len(ins) >= 3:
            return 2 * 2 * _prod(ins[0]) * _prod(ins[2][1:])
        if op.startswith("_scaled_dot_product") and len(ins) >= 3:
            if op.endswith("backward"):
                return fc.sdpa_backward_flop_count(ins[0], ins[1], ins[2], ins[3])
            return fc.sdpa_flop_count(ins[0], ins[1], ins[2])
    except Exception:  # an overload with other argument order: counted as elementwise
        return 0.0
    return 0.0


def _collective_s(core, a) -> float:
    """A collective the process group ran (named by its collective table:
    "allreduce", "allgather", ...), by the collective model."""

    name = a["name"].split("::")[-1]
    kind = tc.C10D_KINDS.get(name + "_") or tc.C10D_KINDS.get(name) or (name if name in tc.KINDS else "all_reduce")
    return tc.collective_s(core, kind, int(a["bytes"]), max(int(a["world"]), 1))


def activity_cost(core, a: dict) -> tuple[float, str]:
    """(microseconds, engine) of one recorded activity."""
    kind = a["kind"]
    if kind == "copy":
        # Host <-> device copies are charged at the core's DMA rate (the host
        # link is not in the table: a blind spot, docs/estimates.md).
        s = a["bytes"] / (core.dma_engines * core.dma_bytes_per_s_per_engine) + core.dma_fixed_latency_s
        return s * 1e6, "dma"
    if kind == "collective":
        return _collective_s(core, a) * 1e6, "collective"
    ins, outs = a["in_shapes"], a["out_shapes"]
    flops = shape_flops(a["name"], ins, outs)
    elements = max([_prod(s) for s in ins + outs] or [0])
    s, engine = op_cost(
        core, a["name"], flops=flops, nbytes=a["bytes"], elements=elements, fp32=a["dtype"] in ("Float", "Double")
    )
    return s * 1e6, engine


def estimate_activities(items: list[dict]) -> list[tuple[float, str]]:
    core = trainium.CORES[TARGET]
    return [activity_cost(core, a) for a in items]
