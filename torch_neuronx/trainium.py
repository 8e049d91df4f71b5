"""Trainium's published numbers, per NeuronCore generation: the one table
(decisions.md 19) that the NKI limit checks, the NKI cost model and any
later estimate read. Nothing here is fitted to a measurement; each number
cites where AWS publishes it.

Sources (aws-neuron/aws-neuron-sdk at 81ce03ae, published under
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/<path>.html):
  [chip]     about-neuron/arch/neuron-hardware/trainium{,2,3}.rst: cores per
             chip, HBM, chip TFLOPS
  [arch-v2]  nki/guides/architecture/trainium_inferentia2_arch.rst (NC-v2)
  [arch-v3]  nki/guides/architecture/trainium2_arch.rst (NC-v3): the "Compute
             Engine Specifications" table (clocks, widths), SBUF/PSUM geometry
  [arch-v4]  nki/guides/architecture/trainium3_arch.rst (NC-v4)
  [dma]      nki/deep-dives/nki-dma-bandwidth-guide.rst and
             nki/get-started/about/nki-dma-overview.rst: 16 DMA engines per
             core, each serving 8 partitions, 17 / 23 / 33 bytes/ns sustained
             per engine, ~1300 ns fixed cost per transfer
  [isa]      nki/api/nki/isa/__init__.py at 1db4d74e (the last docstrings with
             "Estimated instruction cost"): matmul max(min(64, N_stationary),
             N_moving) cycles (x4 for fp32), MIN_II ~64 cycles, GpSimd start
             ~150 cycles
  [tile]     nki/api/nki.language.tile_size.rst (tile limits)
"""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class NeuronCore:
    name: str
    generation: str
    cores_per_chip: int            # [chip]
    # -- on-chip memory [arch-*], [tile]
    partitions: int
    sbuf_bytes_per_partition: int
    psum_bytes_per_partition: int
    psum_banks: int
    # -- tile limits [tile]
    pmax: int
    gemm_stationary_fmax: int
    gemm_moving_fmax: int
    psum_fmax: int
    bn_stats_fmax: int
    # -- engine clocks [arch-*] and instruction costs [isa]
    tensor_clock_hz: float         # 128 x 128 PE array: one moving column per cycle
    vector_clock_hz: float
    scalar_clock_hz: float
    gpsimd_clock_hz: float
    min_ii_cycles: int             # smallest issue interval of a compute instruction
    gpsimd_start_cycles: int
    # -- DMA [dma]
    dma_engines: int
    partitions_per_dma_engine: int
    dma_bytes_per_s_per_engine: float
    dma_fixed_latency_s: float
    # -- HBM [chip]
    hbm_bytes_per_s_per_chip: float

    @property
    def psum_bank_bytes(self) -> int:
        return self.psum_bytes_per_partition // self.psum_banks

    @property
    def sbuf_bytes(self) -> int:
        return self.partitions * self.sbuf_bytes_per_partition

    @property
    def tensor_bf16_flops(self) -> float:
        """Peak dense BF16 matmul rate of one core: 128 x 128 PEs, 2 FLOPs each per cycle."""
        return 128 * 128 * 2 * self.tensor_clock_hz


_COMMON = dict(partitions=128, psum_bytes_per_partition=16 * KiB, psum_banks=8, pmax=128, gemm_stationary_fmax=128,
               gemm_moving_fmax=512, psum_fmax=512, bn_stats_fmax=512, min_ii_cycles=64, gpsimd_start_cycles=150,
               dma_engines=16, partitions_per_dma_engine=8, dma_fixed_latency_s=1.3e-6)

# Trainium1, NeuronCore-v2: 2 cores per chip, SBUF 24 MiB = 128 x 192 KiB; Tensor
# 2.8 GHz, Vector 1.12, Scalar 1.4, GpSimd 1.4 GHz; DMA 17 B/ns per engine;
# HBM 820 GiB/s per chip.
TRN1 = NeuronCore(name="trn1", generation="NeuronCore-v2", cores_per_chip=2, sbuf_bytes_per_partition=192 * KiB,
                  tensor_clock_hz=2.8e9, vector_clock_hz=1.12e9, scalar_clock_hz=1.4e9, gpsimd_clock_hz=1.4e9,
                  dma_bytes_per_s_per_engine=17e9, hbm_bytes_per_s_per_chip=820 * 2**30, **_COMMON)

# Trainium2, NeuronCore-v3: 8 cores per chip, SBUF 28 MiB = 128 x 224 KiB, PSUM
# 2 MiB = 128 x 16 KiB in 8 banks; Tensor 2.4 GHz (79 BF16 TFLOPS per core),
# Vector 0.96, Scalar 1.2, GpSimd 1.2 GHz; DMA 23 B/ns per engine; HBM 2.9 TB/s
# per chip (3 TB/s in [arch-v3]).
TRN2 = NeuronCore(name="trn2", generation="NeuronCore-v3", cores_per_chip=8, sbuf_bytes_per_partition=224 * KiB,
                  tensor_clock_hz=2.4e9, vector_clock_hz=0.96e9, scalar_clock_hz=1.2e9, gpsimd_clock_hz=1.2e9,
                  dma_bytes_per_s_per_engine=23e9, hbm_bytes_per_s_per_chip=2.9e12, **_COMMON)

# Trainium3, NeuronCore-v4: 8 cores per chip, SBUF 32 MiB = 128 x 256 KiB; Tensor
# 2.4 GHz, Vector 1.2, Scalar 1.2, GpSimd 1.2 GHz; DMA 33 B/ns per engine; HBM
# 4.9 TB/s per chip (4.7 in [arch-v4]).
TRN3 = NeuronCore(name="trn3", generation="NeuronCore-v4", cores_per_chip=8, sbuf_bytes_per_partition=256 * KiB,
                  tensor_clock_hz=2.4e9, vector_clock_hz=1.2e9, scalar_clock_hz=1.2e9, gpsimd_clock_hz=1.2e9,
                  dma_bytes_per_s_per_engine=33e9, hbm_bytes_per_s_per_chip=4.9e12, **_COMMON)

CORES = {"trn1": TRN1, "trn2": TRN2, "trn3": TRN3}


# -- per-op roofline, for ops that run as their own kernel (not in an NKI kernel)
def hbm_bytes_per_s(core: NeuronCore) -> float:
    """One core's share of its chip's HBM bandwidth."""
    return core.hbm_bytes_per_s_per_chip / core.cores_per_chip


def roofline_parts(core: NeuronCore, *, flops: float = 0.0, hbm_bytes: float = 0.0, elements: float = 0.0,
                   engine: str = "vector", fp32_matmul: bool = False) -> dict[str, float]:
    """Seconds one op run alone on `core` needs from each resource: "dma"
    (its operands streamed through the core's HBM share), "tensor" (its
    matmul FLOPs at the Tensor engine's peak, fp32 at a quarter [isa]) and
    `engine` (its elementwise work, one element per partition lane per cycle)."""
    clock = {"vector": core.vector_clock_hz, "scalar": core.scalar_clock_hz, "gpsimd": core.gpsimd_clock_hz}[engine]
    return {"dma": hbm_bytes / hbm_bytes_per_s(core),
            "tensor": flops / core.tensor_bf16_flops * (4 if fp32_matmul else 1),
            engine: elements / (core.partitions * clock)}


def roofline_s(core: NeuronCore, **work) -> float:
    """Time of one op run alone on `core`: its slowest resource
    (roofline_parts) plus the fixed cost of one DMA in and one out [dma]. A
    lower bound per op: no fusion keeps operands in SBUF."""
    return max(roofline_parts(core, **work).values()) + 2 * core.dma_fixed_latency_s
