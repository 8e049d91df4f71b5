"""Trainium's published numbers, per NeuronCore generation: the one table
that the NKI limit checks, the NKI cost model and any
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
  [lnc]      about-neuron/arch/neuron-features/logical-neuroncore-config.rst:
             LNC=2 (two physical cores per logical core) is the default on
             Trn2 and Trn3; Trn1 has no LNC (one logical core per core)
  [inst]     about-neuron/arch/neuron-hardware/trn1-arch.rst, trn2-arch.rst,
             trn3-arch.rst: chips per instance, NeuronLink GB/s per chip, EFA
             Gbps per instance
  [cc-intra] neuron-runtime/explore/intranode-collective-comm.rst: per-hop
             latency of Ring/KangaRing "about 1-2 us (HBM load dependent)";
             ring HBM touches (all-gather 1 read + 1 write per hop,
             reduce-scatter 2 reads + 1 write); algorithm by size (Mesh
             < 1 MB, RDH 1-56 MB, KangaRing > 56 MB)
  [cc-inter] neuron-runtime/explore/internode-collective-comm.rst: per-hop
             (point-to-point) latency across instances "~15us"
"""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True)
class NeuronCore:
    name: str
    generation: str
    cores_per_chip: int  # [chip]
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
    tensor_clock_hz: float  # 128 x 128 PE array: one moving column per cycle
    vector_clock_hz: float
    scalar_clock_hz: float
    gpsimd_clock_hz: float
    min_ii_cycles: int  # smallest issue interval of a compute instruction
    gpsimd_start_cycles: int
    # -- DMA [dma]
    dma_engines: int
    partitions_per_dma_engine: int
    dma_bytes_per_s_per_engine: float
    dma_fixed_latency_s: float
    # -- HBM [chip]
    hbm_bytes_per_s_per_chip: float
    hbm_bytes_per_chip: int  # capacity; one logical core's share is what a rank can allocate
    # -- interconnect [chip], [inst], [lnc]
    neuronlink_bytes_per_s_per_chip: float  # both directions, all links of one chip
    lnc: int  # default physical cores per logical core (a rank)
    instance: str  # the default instance, a key of INSTANCES

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


_COMMON = dict(
    partitions=128,
    psum_bytes_per_partition=16 * KiB,
    psum_banks=8,
    pmax=128,
    gemm_stationary_fmax=128,
    gemm_moving_fmax=512,
    psum_fmax=512,
    bn_stats_fmax=512,
    min_ii_cycles=64,
    gpsimd_start_cycles=150,
    dma_engines=16,
    partitions_per_dma_engine=8,
    dma_fixed_latency_s=1.3e-6,
)

# Trainium1, NeuronCore-v2: 2 cores per chip, SBUF 24 MiB = 128 x 192 KiB; Tensor
# 2.8 GHz, Vector 1.12, Scalar 1.4, GpSimd 1.4 GHz; DMA 17 B/ns per engine;
# HBM 32 GiB, 820 GiB/s per chip; NeuronLink-v2 384 GB/s per chip (trn1n 768) [inst].
TRN1 = NeuronCore(
    name="trn1",
    generation="NeuronCore-v2",
    cores_per_chip=2,
    sbuf_bytes_per_partition=192 * KiB,
    tensor_clock_hz=2.8e9,
    vector_clock_hz=1.12e9,
    scalar_clock_hz=1.4e9,
    gpsimd_clock_hz=1.4e9,
    dma_bytes_per_s_per_engine=17e9,
    hbm_bytes_per_s_per_chip=820 * 2**30,
    hbm_bytes_per_chip=32 * GiB,
    neuronlink_bytes_per_s_per_chip=384e9,
    lnc=1,
    instance="trn1.32xlarge",
    **_COMMON,
)

# Trainium2, NeuronCore-v3: 8 cores per chip, SBUF 28 MiB = 128 x 224 KiB, PSUM
# 2 MiB = 128 x 16 KiB in 8 banks; Tensor 2.4 GHz (79 BF16 TFLOPS per core),
# Vector 0.96, Scalar 1.2, GpSimd 1.2 GHz; DMA 23 B/ns per engine; HBM 96 GiB
# (4 stacks of 24 GiB, each shared by 2 cores), 2.9 TB/s per chip (3 TB/s in
# [arch-v3]); NeuronLink-v3 1,024 GB/s per chip within an
# instance ([inst]; [chip]'s 1.28 TB/s adds the 256 GB/s of the UltraServer's
# links between instances).
TRN2 = NeuronCore(
    name="trn2",
    generation="NeuronCore-v3",
    cores_per_chip=8,
    sbuf_bytes_per_partition=224 * KiB,
    tensor_clock_hz=2.4e9,
    vector_clock_hz=0.96e9,
    scalar_clock_hz=1.2e9,
    gpsimd_clock_hz=1.2e9,
    dma_bytes_per_s_per_engine=23e9,
    hbm_bytes_per_s_per_chip=2.9e12,
    hbm_bytes_per_chip=96 * GiB,
    neuronlink_bytes_per_s_per_chip=1024e9,
    lnc=2,
    instance="trn2.48xlarge",
    **_COMMON,
)

# Trainium3, NeuronCore-v4: 8 cores per chip, SBUF 32 MiB = 128 x 256 KiB; Tensor
# 2.4 GHz, Vector 1.2, Scalar 1.2, GpSimd 1.2 GHz; DMA 33 B/ns per engine; HBM
# 144 GiB, 4.9 TB/s per chip (4.7 in [arch-v4]); NeuronLink-v4 2.56 TB/s per chip [chip]
# (2,048 GiB/s in [inst]).
TRN3 = NeuronCore(
    name="trn3",
    generation="NeuronCore-v4",
    cores_per_chip=8,
    sbuf_bytes_per_partition=256 * KiB,
    tensor_clock_hz=2.4e9,
    vector_clock_hz=1.2e9,
    scalar_clock_hz=1.2e9,
    gpsimd_clock_hz=1.2e9,
    dma_bytes_per_s_per_engine=33e9,
    hbm_bytes_per_s_per_chip=4.9e12,
    hbm_bytes_per_chip=144 * GiB,
    neuronlink_bytes_per_s_per_chip=2.56e12,
    lnc=2,
    instance="trn3-gen1-server",
    **_COMMON,
)

CORES = {"trn1": TRN1, "trn2": TRN2, "trn3": TRN3}


def ranks_per_chip(core: NeuronCore) -> int:
    """Logical cores (ranks, PyTorch devices) per chip at the default LNC:
    trn1 2, trn2 and trn3 4 [lnc]."""
    return core.cores_per_chip // core.lnc


@dataclass(frozen=True)
class Instance:
    name: str
    chips: int  # [inst]
    efa_bytes_per_s: float  # per instance, one direction (EFA Gbps / 8); 0: no EFA figure


# trn1.32xlarge: 16 chips, EFA 800 Gbps (trn1n.32xlarge 1,600). trn2.48xlarge
# (and trn2u.48xlarge): 16 chips in a 4x4 torus, EFAv3 3,200 Gbps. trn2.3xlarge:
# 1 chip [chip], [lnc]; AWS's Neuron pages give it no EFA figure. Trn3 Gen1
# UltraServer: 4 servers of 16 chips, EFA 12,800 Gbps per UltraServer, so
# 3,200 per server.
INSTANCES = {
    i.name: i
    for i in (
        Instance("trn1.32xlarge", chips=16, efa_bytes_per_s=800e9 / 8),
        Instance("trn1n.32xlarge", chips=16, efa_bytes_per_s=1600e9 / 8),
        Instance("trn2.48xlarge", chips=16, efa_bytes_per_s=3200e9 / 8),
        Instance("trn2.3xlarge", chips=1, efa_bytes_per_s=0.0),
        Instance("trn3-gen1-server", chips=16, efa_bytes_per_s=12800e9 / 8 / 4),
    )
}

# Collective latency per step (hop) of an algorithm: within an instance "about
# 1-2 us (HBM load dependent)" [cc-intra]: the midpoint, chosen before any
# comparison; across instances "~15us" [cc-inter].
HOP_LATENCY_INTRA_S = 1.5e-6
HOP_LATENCY_INTER_S = 15e-6
# Message sizes where the runtime switches algorithm [cc-intra]: Mesh (one step
# per phase) below 1 MB, RDH (log2 n steps) to 56 MB, (Kanga)Ring above.
MESH_MAX_BYTES = 1 << 20
RDH_MAX_BYTES = 56 << 20
# HBM accesses per byte a ring hop moves [cc-intra]: copy 1R1W, reduce 2R1W.
HBM_TOUCHES_COPY = 2
HBM_TOUCHES_REDUCE = 3


# -- per-op roofline, for ops that run as their own kernel (not in an NKI kernel)
def hbm_bytes_per_s(core: NeuronCore) -> float:
    """One core's share of its chip's HBM bandwidth."""
    return core.hbm_bytes_per_s_per_chip / core.cores_per_chip


def roofline_parts(
    core: NeuronCore,
    *,
    flops: float = 0.0,
    hbm_bytes: float = 0.0,
    elements: float = 0.0,
    engine: str = "vector",
    fp32_matmul: bool = False,
) -> dict[str, float]:
    """Seconds one op run alone on `core` needs from each resource: "dma"
    (its operands streamed through the core's HBM share), "tensor" (its
    matmul FLOPs at the Tensor engine's peak, fp32 at a quarter [isa]) and
    `engine` (its elementwise work, one element per partition lane per cycle)."""
    clock = {"vector": core.vector_clock_hz, "scalar": core.scalar_clock_hz, "gpsimd": core.gpsimd_clock_hz}[engine]
    return {
        "dma": hbm_bytes / hbm_bytes_per_s(core),
        "tensor": flops / core.tensor_bf16_flops * (4 if fp32_matmul else 1),
        engine: elements / (core.partitions * clock),
    }


def roofline_s(core: NeuronCore, **work) -> float:
    """Time of one op run alone on `core`: its slowest resource
    (roofline_parts) plus the fixed cost of one DMA in and one out [dma]. A
    lower bound per op: no fusion keeps operands in SBUF."""
    return max(roofline_parts(core, **work).values()) + 2 * core.dma_fixed_latency_s
