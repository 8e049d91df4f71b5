"""Trainium's published numbers, per NeuronCore generation: the one table
(decisions.md 19) that the NKI limit checks, the NKI cost model and any
later estimate read. Nothing here is fitted to a measurement; each number
cites where AWS publishes it.

Sources (AWS Neuron documentation, aws-neuron/aws-neuron-sdk):
  [arch-trn2]  general/arch/neuron-hardware/trainium2.rst and neuron-core-v3.rst
  [arch-trn1]  general/arch/neuron-hardware/trainium.rst and neuron-core-v2.rst
  [arch-trn3]  general/arch/neuron-hardware/trainium3.rst and neuron-core-v4.rst
  [nki-arch]   nki/arch/trainium2_arch.rst (NKI architecture guide: engines,
               SBUF/PSUM geometry, per-instruction costs)
  [nki-api]    nki/api/nki.language.tile_size (tile limits)
"""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class NeuronCore:
    name: str
    generation: str
    # -- on-chip memory [arch-*], [nki-api]
    partitions: int
    sbuf_bytes_per_partition: int
    psum_bytes_per_partition: int
    psum_banks: int
    # -- tile limits [nki-api]
    pmax: int
    gemm_stationary_fmax: int
    gemm_moving_fmax: int
    psum_fmax: int
    bn_stats_fmax: int
    # -- engines [arch-*], [nki-arch]
    clock_hz: float             # engine clock
    pe_rows: int                # Tensor engine systolic array
    pe_cols: int
    tensor_bf16_flops: float    # dense BF16 per core
    tensor_fp8_flops: float
    tensor_fp32_flops: float
    vector_elems_per_cycle: float  # per partition lane, per cycle
    scalar_elems_per_cycle: float
    gpsimd_elems_per_cycle: float
    instr_overhead_cycles: int  # fixed cost of issuing one compute instruction
    # -- memory system [arch-*]
    hbm_bytes_per_s_per_core: float
    dma_engines: int
    dma_fixed_s: float          # latency of one DMA transfer (descriptor to completion)
    cores_per_chip: int

    @property
    def psum_bank_bytes(self) -> int:
        return self.psum_bytes_per_partition // self.psum_banks

    @property
    def sbuf_bytes(self) -> int:
        return self.partitions * self.sbuf_bytes_per_partition


# Trainium2 (NeuronCore-v3) [arch-trn2]: 8 cores per chip, 667 dense BF16 TFLOPS
# and 1,299 FP8 per chip, 181 FP32; 2.9 TB/s HBM per chip; SBUF 28 MiB =
# 128 x 224 KiB, PSUM 2 MiB = 128 x 16 KiB in 8 banks; 16 DMA engines per core.
TRN2 = NeuronCore(
    name="trn2", generation="NeuronCore-v3",
    partitions=128, sbuf_bytes_per_partition=224 * KiB, psum_bytes_per_partition=16 * KiB, psum_banks=8,
    pmax=128, gemm_stationary_fmax=128, gemm_moving_fmax=512, psum_fmax=512, bn_stats_fmax=512,
    clock_hz=2.4e9, pe_rows=128, pe_cols=128,
    tensor_bf16_flops=667e12 / 8, tensor_fp8_flops=1299e12 / 8, tensor_fp32_flops=181e12 / 8,
    vector_elems_per_cycle=1.0, scalar_elems_per_cycle=1.0, gpsimd_elems_per_cycle=1.0,
    instr_overhead_cycles=64,
    hbm_bytes_per_s_per_core=2.9e12 / 8, dma_engines=16, dma_fixed_s=2e-6, cores_per_chip=8,
)

# Trainium1 (NeuronCore-v2) [arch-trn1]: 2 cores per chip, 190 BF16 TFLOPS per
# chip, 820 GiB/s HBM per chip, SBUF 24 MiB = 128 x 192 KiB.
TRN1 = NeuronCore(
    name="trn1", generation="NeuronCore-v2",
    partitions=128, sbuf_bytes_per_partition=192 * KiB, psum_bytes_per_partition=16 * KiB, psum_banks=8,
    pmax=128, gemm_stationary_fmax=128, gemm_moving_fmax=512, psum_fmax=512, bn_stats_fmax=512,
    clock_hz=2.8e9, pe_rows=128, pe_cols=128,
    tensor_bf16_flops=190e12 / 2, tensor_fp8_flops=190e12 / 2, tensor_fp32_flops=47.5e12 / 2,
    vector_elems_per_cycle=1.0, scalar_elems_per_cycle=1.0, gpsimd_elems_per_cycle=1.0,
    instr_overhead_cycles=64,
    hbm_bytes_per_s_per_core=820 * 2**30 / 2, dma_engines=16, dma_fixed_s=2e-6, cores_per_chip=2,
)

# Trainium3 (NeuronCore-v4) [arch-trn3]: 8 cores per chip, 671 BF16 TFLOPS per
# chip, 4.9 TB/s HBM, SBUF 32 MiB = 128 x 256 KiB.
TRN3 = NeuronCore(
    name="trn3", generation="NeuronCore-v4",
    partitions=128, sbuf_bytes_per_partition=256 * KiB, psum_bytes_per_partition=16 * KiB, psum_banks=8,
    pmax=128, gemm_stationary_fmax=128, gemm_moving_fmax=512, psum_fmax=512, bn_stats_fmax=512,
    clock_hz=2.4e9, pe_rows=128, pe_cols=128,
    tensor_bf16_flops=671e12 / 8, tensor_fp8_flops=2517e12 / 8, tensor_fp32_flops=183e12 / 8,
    vector_elems_per_cycle=1.0, scalar_elems_per_cycle=1.0, gpsimd_elems_per_cycle=1.0,
    instr_overhead_cycles=64,
    hbm_bytes_per_s_per_core=4.9e12 / 8, dma_engines=16, dma_fixed_s=2e-6, cores_per_chip=8,
)

CORES = {"trn1": TRN1, "trn2": TRN2, "trn3": TRN3}
