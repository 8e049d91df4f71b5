"""The `Estimate` of one kernel call on one NeuronCore
(`torch_neuronx.nki.last_estimate()`), as cost/schedule.py computes it."""

from __future__ import annotations

from dataclasses import dataclass, field


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
