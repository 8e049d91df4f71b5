"""SwiGLU activations as NKI kernels: silu(x) and the fused
silu(x[..., :d]) * x[..., d:], rows on partitions (128 per tile, the tail
masked), columns in blocks of at most 2048 on the free axis. The activation
runs on the Scalar engine, the product on the Vector engine, in fp32."""

import math

import nki
import nki.language as nl


def _chunk(n, most=2048):
    """The widest column block dividing n: fewer, longer instructions and
    transfers (each pays a fixed cost) while a tile stays small in SBUF."""
    return max(c for c in range(1, min(n, most) + 1) if n % c == 0)


@nki.jit
def silu_kernel(x):
    """x: (rows, cols). Returns silu(x)."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    c = _chunk(cols)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(c)[None, :]
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        for j in nl.affine_range(cols // c):
            a = nl.load(x[i * 128 + ip, j * c + jf], mask=live, dtype=nl.float32)
            nl.store(out[i * 128 + ip, j * c + jf], value=nl.silu(a, dtype=x.dtype), mask=live)
    return out


@nki.jit
def silu_and_mul_kernel(x):
    """x: (rows, 2d). Returns silu(x[:, :d]) * x[:, d:], shape (rows, d)."""
    rows, two_d = x.shape
    d = two_d // 2
    out = nl.ndarray((rows, d), dtype=x.dtype, buffer=nl.shared_hbm)
    c = _chunk(d)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(c)[None, :]
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        for j in nl.affine_range(d // c):
            gate = nl.load(x[i * 128 + ip, j * c + jf], mask=live, dtype=nl.float32)
            up = nl.load(x[i * 128 + ip, d + j * c + jf], mask=live, dtype=nl.float32)
            y = nl.multiply(nl.silu(gate), up, dtype=x.dtype)
            nl.store(out[i * 128 + ip, j * c + jf], value=y, mask=live)
    return out
