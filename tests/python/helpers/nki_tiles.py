"""Moving a whole HBM tensor into a kernel's SBUF and back, for tests whose
kernels are about one instruction (call inside an @nki.jit kernel), and the
tolerance of a product accumulated in fp32 against PyTorch's."""

import nki.isa as nisa
import nki.language as nl
import torch


def load(x):
    """An SBUF tile holding all of x (an HBM tensor of at most 128 rows)."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


def store(t):
    """A new HBM output holding the tile t."""
    out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def accumulation_tolerance(k: int, dtype: torch.dtype) -> dict:
    """assert_close's tolerance for a kernel's product over `k` terms summed
    in fp32 (PSUM, one K tile after another) against PyTorch's fp32 matmul,
    whose summation order is the host BLAS's and differs by CPU: k rounding
    steps of 2**-24 relative to the sum of nonnegative terms. Outputs in a
    narrower dtype keep its default tolerance, far above that."""
    return {"rtol": k * 2**-24, "atol": 1e-5} if dtype == torch.float32 else {}
