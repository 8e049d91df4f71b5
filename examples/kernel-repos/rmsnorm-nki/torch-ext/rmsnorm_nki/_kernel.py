"""The RMSNorm NKI kernel: y = x / sqrt(mean(x^2) + eps) * w, rows on
partitions (128 per tile, the tail masked), the hidden size on the free
axis, statistics in fp32 as Transformers' Llama/Qwen3/Mistral RMSNorm."""

import math

import nki
import nki.language as nl


@nki.jit
def rmsnorm_kernel(x, w, eps):
    """x: (rows, hidden) in HBM, w: (hidden,). Returns y like x."""
    rows, hidden = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(hidden)[None, :]
    w_tile = nl.load(w.reshape((1, hidden))[iw, iy])
    w_bcast = w_tile.broadcast_to((128, hidden))
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        x_tile = nl.load(x[i * 128 + ip, iy], mask=live, dtype=nl.float32)
        mean_sq = nl.sum(nl.square(x_tile), axis=[1]) / hidden
        inv_rms = nl.rsqrt(mean_sq + eps)
        normed = nl.multiply(x_tile, inv_rms, dtype=x.dtype)
        y = nl.multiply(normed, w_bcast, dtype=x.dtype)
        nl.store(out[i * 128 + ip, iy], value=y, mask=live)
    return out
