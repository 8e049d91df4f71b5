"""The `Estimate` of one kernel call on one logical NeuronCore
(`torch_neuronx.nki.last_estimate()`), as cost/schedule.py computes it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Estimate:
    """`torch_neuronx.nki.last_estimate()`: one kernel call on one logical
    NeuronCore: total_us is its time, engine_us the busy time of each engine
    summed over its physical cores (`cores`, 2 for a `kernel[2]` launch on
    Trainium2 or 3, LNC=2)."""

    kernel: str
    target: str
    total_us: float
    engine_us: dict = field(default_factory=dict)  # busy time per engine
    instructions: dict = field(default_factory=dict)  # instruction count per engine
    dma_bytes: int = 0
    flops: int = 0
    timeline: list = field(default_factory=list, repr=False)  # (instruction, engine, start us, busy us, line)
    cores: int = 1  # physical cores the kernel ran on

    @property
    def bottleneck(self) -> str:
        return max(self.engine_us, key=self.engine_us.get) if self.engine_us else "none"

    def _where(self) -> str:
        if self.cores == 1:
            return f"one {self.target} NeuronCore"
        return f"one {self.target} logical NeuronCore ({self.cores} physical cores, LNC={self.cores})"

    def __str__(self):
        busy = ", ".join(
            f"{e} {t:.2f} us ({self.instructions.get(e, 0)} instr)"
            for e, t in sorted(self.engine_us.items(), key=lambda kv: -kv[1])
        )
        return (
            f"NKI estimate for '{self.kernel}' on {self._where()}: {self.total_us:.2f} us "
            f"(bottleneck: {self.bottleneck}); busy: {busy}; {self.dma_bytes} bytes moved by DMA, "
            f"{self.flops} matmul FLOPs"
        )
