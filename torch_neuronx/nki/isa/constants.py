"""`nki.isa.constants`: the enums of nki.isa calls under the module name
AWS's newer kernels import them from (`from nki.isa.constants import
oob_mode`); the same objects as `nisa.oob_mode` and the others."""

from .enums import dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd

__all__ = ["dge_mode", "dma_engine", "engine", "matmul_perf_mode", "nc_version", "oob_mode", "reduce_cmd"]
