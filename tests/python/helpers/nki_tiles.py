"""Moving a whole HBM tensor into a kernel's SBUF and back, for tests whose
kernels are about one instruction: call inside an @nki.jit kernel."""

import nki.isa as nisa
import nki.language as nl


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
