"""The RMSNorm NKI kernel: y = x / sqrt(mean(x^2) + eps) * w, statistics in
fp32 and the normalised rows rounded to x's dtype before the weight, as
Transformers' Llama/Qwen3/Mistral RMSNorm. Rows on partitions: 128 per tile
(the tail masked); when the hidden size is small (Qwen3 normalises each
head's 64 or 128 values) and the rows fill whole tiles, each partition takes
r consecutive rows, so one instruction covers 128 x r rows instead of 128."""

import math

import nki
import nki.language as nl

_PACK_ELEMENTS = 4096  # rows x hidden per partition in one packed tile (16 KiB of fp32)


def _rows_per_partition(rows, hidden):
    if rows % 128 or hidden * 2 > _PACK_ELEMENTS:
        return 1
    per = rows // 128
    return max(r for r in range(1, per + 1) if per % r == 0 and r * hidden <= _PACK_ELEMENTS)


@nki.jit
def rmsnorm_kernel(x, w, eps):
    """x: (rows, hidden) in HBM, w: (hidden,). Returns y in x's dtype (fp32
    when w's dtype differs)."""
    rows, hidden = x.shape
    # weight * normed: different float dtypes promote to fp32, as in PyTorch
    out_dtype = x.dtype if x.dtype == w.dtype else nl.float32
    out = nl.ndarray(x.shape, dtype=out_dtype, buffer=nl.shared_hbm)
    r = _rows_per_partition(rows, hidden)
    if r > 1:
        ip = nl.arange(128)[:, None, None]
        ir = nl.arange(r)[None, :, None]
        iy = nl.arange(hidden)[None, None, :]
        w_b = nl.load(w.reshape((1, 1, hidden))[nl.arange(1)[:, None, None], nl.arange(1)[None, :, None], iy])
        w_b = w_b.broadcast_to((128, r, hidden))
        for i in nl.affine_range(rows // (128 * r)):
            rows_i = i * 128 * r + ip * r + ir
            x_tile = nl.load(x[rows_i, iy], dtype=nl.float32)
            mean_sq = nl.sum(nl.square(x_tile), axis=[2], keepdims=True) / hidden
            normed = nl.multiply(x_tile, nl.rsqrt(mean_sq + eps), dtype=x.dtype)
            nl.store(out[rows_i, iy], value=nl.multiply(normed, w_b, dtype=out_dtype))
        return out
    ip = nl.arange(128)[:, None]
    iy = nl.arange(hidden)[None, :]
    w_b = nl.load(w.reshape((1, hidden))[nl.arange(1)[:, None], iy]).broadcast_to((128, hidden))
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        x_tile = nl.load(x[i * 128 + ip, iy], mask=live, dtype=nl.float32)
        mean_sq = nl.sum(nl.square(x_tile), axis=[1], mask=live) / hidden
        normed = nl.multiply(x_tile, nl.rsqrt(mean_sq + eps), dtype=x.dtype)
        nl.store(out[i * 128 + ip, iy], value=nl.multiply(normed, w_b, dtype=out_dtype), mask=live)
    return out
