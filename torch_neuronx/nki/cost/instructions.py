"""The engine time of one instruction, from AWS's ISA and architecture guides
(N = elements per partition of the instruction's output, or of its input for
reductions):
  - Tensor engine, matmul of stationary [K, M] and moving [K, N]:
    max(min(64, M), N) cycles, four times that when the operands are fp32;
    a Tensor-engine transpose is a matmul with an identity moving tile.
  - Vector engine: max(64, N) cycles for one tile input, max(64, 2N) for two
    (N when one of them is in PSUM); bn_aggr max(64, 13 N / 3).
  - Scalar engine: max(64, N) cycles.  GpSimd: 150 + N cycles.
  - DMA: each of the 16 DMA engines serves 8 partitions; a transfer keeps
    ceil(P / 8) engines busy for bytes-per-engine / per-engine bandwidth (the
    fixed latency after it is schedule.py's).
An instruction is timed by the rule of its engine (BY_ENGINE) unless it has
an entry of its own (BY_NAME). Every constant is `torch_neuronx.trainium`'s.
"""

from __future__ import annotations

import math

import torch

from ... import trainium
from ..trace.buffers import PSUM


def _tensor(ins, core):
    c = ins.cost
    m, n = c.get("m", 128), c.get("n", 512)
    fp32 = c.get("in_dtype") == torch.float32
    cycles = max(min(core.min_ii_cycles, m), n) * (4 if fp32 else 1)
    if c.get("double_row"):  # FP8 double-row mode: two rows of each PE at once
        cycles /= 2
    return cycles / core.tensor_clock_hz, 0


def _dma(ins, core):
    c = ins.cost
    shape = c.get("shape", (1,))
    parts = c.get("partitions", shape[0] if shape else 1)
    engines = max(1, min(core.dma_engines, math.ceil(parts / core.partitions_per_dma_engine)))
    nbytes = c.get("bytes", 0)
    return nbytes / engines / core.dma_bytes_per_s_per_engine, engines


def _per_partition(ins) -> int:
    """N: elements per partition of the instruction (its cost record's `elements`, else its shape)."""
    c = ins.cost
    shape = c.get("shape", (1,))
    parts = max(c.get("partitions", shape[0] if shape else 1), 1)
    return c["elements"] // parts if "elements" in c else math.prod(shape) // parts


def _vector(ins, core):
    n = _per_partition(ins)
    tiles = [a for a in ins.reads if a.buffer.kind.on_chip]
    if len(tiles) >= 2 and not any(a.buffer.kind is PSUM for a in tiles):
        cycles = max(core.min_ii_cycles, 2 * n)
    else:
        cycles = max(core.min_ii_cycles, n)
    return cycles / core.vector_clock_hz, 0


def _scalar(ins, core):
    return max(core.min_ii_cycles, _per_partition(ins)) / core.scalar_clock_hz, 0


def _gpsimd(ins, core):
    return (core.gpsimd_start_cycles + _per_partition(ins)) / core.gpsimd_clock_hz, 0


def _bn_aggr(ins, core):
    return max(core.min_ii_cycles, 13 * _per_partition(ins) // 3) / core.vector_clock_hz, 0


# (seconds of engine time, DMA engines used) of an instruction, by its engine or by its name
BY_ENGINE = {"tensor": _tensor, "dma": _dma, "vector": _vector, "scalar": _scalar, "gpsimd": _gpsimd}
BY_NAME = {"bn_aggr": _bn_aggr}


def instruction_time(ins, core: trainium.NeuronCore):
    """(engine, seconds of engine time, DMA engines used) for one instruction."""
    rule = BY_NAME.get(ins.name) or BY_ENGINE.get(ins.engine)
    if rule is None:
        return ins.engine, 0.0, 0
    seconds, dma_engines = rule(ins, core)
    return ins.engine, seconds, dma_engines
