"""What a traced kernel would cost on one NeuronCore: an instruction-level
model with every constant from `torch_neuronx.trainium` (decisions.md 19),
fixed before any comparison with a measurement (docs/nki.md holds the
validation table).

Per instruction (N = elements per partition of the instruction's output, or
of its input for reductions), from AWS's ISA and architecture guides:
  - Tensor engine, matmul of stationary [K, M] and moving [K, N]:
    max(min(64, M), N) cycles, four times that when the operands are fp32;
    a Tensor-engine transpose is a matmul with an identity moving tile.
  - Vector engine: max(64, N) cycles for one tile input, max(64, 2N) for two
    (N when one of them is in PSUM); bn_aggr max(64, 13 N / 3).
  - Scalar engine: max(64, N) cycles.  GpSimd: 150 + N cycles.
  - DMA: each of the 16 DMA engines serves 8 partitions; a transfer keeps
    ceil(P / 8) engines busy for bytes-per-engine / per-engine bandwidth, and
    completes a fixed latency (descriptors, semaphores) after that.
Engines run their own instruction streams: an instruction starts when its
engine is free and the instructions that wrote what it reads (or read what
it overwrites) have finished, so loads of one tile overlap the matmul of the
previous one exactly as far as the kernel's buffers allow. Not modelled: the
kernel's launch preamble, SBUF bank conflicts, DMA descriptor efficiency for
small rows, the Vector engine's bf16 fast modes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .. import trainium
from .trace import PSUM


@dataclass
class Estimate:
    """`torch_neuronx.nki.last_estimate()`: one kernel call on one NeuronCore."""

    kernel: str
    target: str
    total_us: float
    engine_us: dict = field(default_factory=dict)  # busy time per engine
    instructions: dict = field(default_factory=dict)  # instruction count per engine
    dma_bytes: int = 0
    flops: int = 0
    timeline: list = field(default_factory=list, repr=False)  # (instruction, engine, start us, busy us, line)

    @property
    def bottleneck(self) -> str:
        return max(self.engine_us, key=self.engine_us.get) if self.engine_us else "none"

    def __str__(self):
        busy = ", ".join(
            f"{e} {t:.2f} us ({self.instructions.get(e, 0)} instr)"
            for e, t in sorted(self.engine_us.items(), key=lambda kv: -kv[1])
        )
        return (
            f"NKI estimate for '{self.kernel}' on one {self.target} NeuronCore: {self.total_us:.2f} us "
            f"(bottleneck: {self.bottleneck}); busy: {busy}; {self.dma_bytes} bytes moved by DMA, "
            f"{self.flops} matmul FLOPs"
        )


def instruction_time(ins, core: trainium.NeuronCore):
    """(engine, seconds of engine time, DMA engines used) for one instruction."""
    c = ins.cost
    eng = ins.engine
    if eng == "tensor":
        m, n = c.get("m", 128), c.get("n", 512)
        fp32 = c.get("in_dtype") == torch.float32
        cycles = max(min(core.min_ii_cycles, m), n) * (4 if fp32 else 1)
        return eng, cycles / core.tensor_clock_hz, 0
    if eng == "dma":
        shape = c.get("shape", (1,))
        parts = c.get("partitions", shape[0] if shape else 1)
        engines = max(1, min(core.dma_engines, math.ceil(parts / core.partitions_per_dma_engine)))
        nbytes = c.get("bytes", 0)
        return eng, nbytes / engines / core.dma_bytes_per_s_per_engine, engines
    shape = c.get("shape", (1,))
    parts = max(c.get("partitions", shape[0] if shape else 1), 1)
    n = c["elements"] // parts if "elements" in c else math.prod(shape) // parts
    if eng == "vector":
        tiles = [a for a in ins.reads if a.buffer.kind.on_chip]
        if ins.name == "bn_aggr":
            cycles = max(core.min_ii_cycles, 13 * n // 3)
        elif len(tiles) >= 2 and not any(a.buffer.kind is PSUM for a in tiles):
            cycles = max(core.min_ii_cycles, 2 * n)
        else:
            cycles = max(core.min_ii_cycles, n)
        return eng, cycles / core.vector_clock_hz, 0
    if eng == "scalar":
        return eng, max(core.min_ii_cycles, n) / core.scalar_clock_hz, 0
    if eng == "gpsimd":
        return eng, (core.gpsimd_start_cycles + n) / core.gpsimd_clock_hz, 0
    return eng, 0.0, 0


class _Times:
    """When each element of each buffer was last written and last read (on-chip
    buffers per element, so writes to disjoint parts of one buffer do not wait
    for each other; HBM tensors as a whole)."""

    def __init__(self):
        self.state: dict = {}

    def _tensors(self, buf):
        root = buf.root()
        st = self.state.get(root.id)
        if st is None:
            st = self.state[root.id] = (
                (torch.zeros(root.shape, dtype=torch.float64), torch.zeros(root.shape, dtype=torch.float64))
                if root.kind.on_chip
                else [0.0, 0.0]
            )
        if isinstance(st, list) or buf is root:
            return st
        return st[0].view(buf.shape), st[1].view(buf.shape)

    def last(self, acc, which: int) -> float:
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            return st[which]
        vals = acc.gather(st[which])
        return float(vals.max()) if vals.numel() else 0.0

    def wrote(self, acc, t: float):
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            st[0] = max(st[0], t)
        else:
            acc.scatter(st[0], torch.tensor(t, dtype=torch.float64))

    def read(self, acc, t: float):
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            st[1] = max(st[1], t)
        else:
            acc.scatter(st[1], torch.maximum(acc.gather(st[1]), torch.tensor(t, dtype=torch.float64)))


def estimate(trace) -> Estimate:
    core = trace.limits
    engine_free: dict = {}
    dma_free = [0.0] * core.dma_engines
    times = _Times()
    busy: dict = {}  # per engine; DMA: the time all 16 DMA engines would need at full use
    count: dict = {}
    dma_bytes = flops = 0
    end_all = 0.0
    by_last_use = sorted((b for b in trace.buffers if b.kind.on_chip and b.parent is None), key=lambda b: b.last_use)
    dead = 0
    timeline = []
    for ins in trace.instrs:
        if ins.engine == "none":
            continue
        while dead < len(by_last_use) and by_last_use[dead].last_use < ins.seq:
            times.state.pop(by_last_use[dead].id, None)
            dead += 1
        eng, dur, n_dma = instruction_time(ins, core)
        ready = 0.0
        for a in ins.reads:  # read after write
            ready = max(ready, times.last(a, 0))
        for a in ins.writes:  # write after read
            ready = max(ready, times.last(a, 1))
        if eng == "dma":
            order = sorted(range(len(dma_free)), key=dma_free.__getitem__)[:n_dma]
            start = max([ready] + [dma_free[i] for i in order])
            for i in order:
                dma_free[i] = start + dur
            end = start + dur + core.dma_fixed_latency_s
            dma_bytes += ins.cost.get("bytes", 0)
        else:
            start = max(ready, engine_free.get(eng, 0.0))
            end = start + dur
            engine_free[eng] = end
            if eng == "tensor" and ins.name not in ("nc_transpose", "transpose"):
                flops += 2 * ins.cost.get("k", 0) * ins.cost.get("m", 0) * ins.cost.get("n", 0)
        busy[eng] = busy.get(eng, 0.0) + (dur * n_dma / core.dma_engines if eng == "dma" else dur)
        timeline.append((ins.name, eng, start * 1e6, dur * 1e6, ins.line))
        count[eng] = count.get(eng, 0) + 1
        for a in ins.writes:
            times.wrote(a, end)
        for a in ins.reads:
            times.read(a, end)
        end_all = max(end_all, end)
    return Estimate(
        trace.kernel_name,
        trace.target,
        end_all * 1e6,
        {e: t * 1e6 for e, t in busy.items()},
        count,
        dma_bytes,
        flops,
        timeline,
    )
