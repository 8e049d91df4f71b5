"""The NKI kernels a Vision Transformer's layer benefits from: layer norm,
the MLP's first projection fused with its bias and GELU (the matmul and the
bias accumulate in PSUM and the Scalar engine applies GELU as it evacuates
PSUM), and GELU alone. Rows (tokens) on partitions, 128 per tile
with the tail masked; statistics and accumulation in fp32."""

import math

import nki
import nki.isa as nisa
import nki.language as nl

W_T_SBUF_BYTES = 160 * 1024  # per partition, for W^T kept in SBUF by linear_gelu_kernel


def _chunk(n, most):
    """The widest block of at most `most` dividing n."""
    return max(c for c in range(1, min(n, most) + 1) if n % c == 0)


@nki.jit
def layer_norm_kernel(x, w, b, eps):
    """x: (rows, hidden), w and b: (hidden,). Returns (x - mean) / sqrt(var + eps) * w + b.
    As AWS's layer norm tutorial v2: mean and variance in one pass (bn_stats
    per chunk, bn_aggr); then shift and scale in one Scalar-engine activation."""
    rows, hidden = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(hidden)[None, :]
    chunk = _chunk(hidden, nl.tile_size.bn_stats_fmax)
    n_chunks = hidden // chunk
    ic = nl.arange(chunk)[None, :]
    i6 = nl.arange(6)[None, :]
    w_b = nl.load(w.reshape((1, hidden))[iw, iy], dtype=nl.float32).broadcast_to((128, hidden))
    b_b = nl.load(b.reshape((1, hidden))[iw, iy], dtype=nl.float32).broadcast_to((128, hidden))
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        x_tile = nl.load(x[i * 128 + ip, iy], mask=live, dtype=nl.float32)
        stats = nl.ndarray((nl.par_dim(128), 6 * n_chunks), dtype=nl.float32)
        for j in nl.affine_range(n_chunks):
            stats[ip, j * 6 + i6] = nisa.bn_stats(x_tile[ip, j * chunk + ic], dtype=nl.float32)
        mean_var = nisa.bn_aggr(stats)
        inv_std = nl.rsqrt(mean_var[ip, 1] + eps)
        # (x - mean) * inv_std on the Scalar engine, as x * inv_std + (-mean * inv_std): the
        # Vector engine, which the statistics and the affine already keep busy, is spared a pass
        shift = nl.multiply(nl.negative(mean_var[ip, 0]), inv_std)
        normed = nisa.activation(op=nl.copy, data=x_tile, scale=inv_std, bias=shift, dtype=nl.float32)
        y = nl.add(nl.multiply(normed, w_b), b_b, dtype=x.dtype)
        nl.store(out[i * 128 + ip, iy], value=y, mask=live)
    return out


@nki.jit
def linear_gelu_kernel(x, w, b):
    """x: (rows, K), w: (M, K) as nn.Linear stores it, b: (M,). Returns
    gelu(x @ w.T + b), (rows, M). W^T stays in SBUF for every row tile."""
    rows, K = x.shape
    M = w.shape[0]
    kt, mt = _chunk(K, 128), _chunk(M, 512)
    wt = _chunk(mt, 128)  # rows of w per DMA transpose (divides mt)
    n_k, n_m = K // kt, M // mt
    assert K * M * 2 <= W_T_SBUF_BYTES * 128, f"W^T ({K} x {M}) does not fit SBUF beside the activations"
    out = nl.ndarray((rows, M), dtype=x.dtype, buffer=nl.shared_hbm)
    ipk = nl.arange(kt)[:, None]
    ifk = nl.arange(kt)[None, :]
    ipw = nl.arange(wt)[:, None]
    ifw = nl.arange(wt)[None, :]
    ifm = nl.arange(mt)[None, :]
    ip = nl.arange(128)[:, None]
    ifr = nl.arange(128)[None, :]
    w_t = nl.ndarray((n_k, nl.par_dim(kt), M), dtype=x.dtype)  # W^T: K on partitions
    for kk in nl.affine_range(n_k):
        for s in nl.affine_range(M // wt):
            w_t[kk, ipk, s * wt + ifw] = nl.load_transpose2d(w[s * wt + ipw, kk * kt + ifk])
    # The bias joins the accumulation as one more matmul (a row of ones times
    # the bias row), so GELU can evacuate PSUM in one Scalar-engine instruction.
    bias = nl.load(b.reshape((1, M))[nl.arange(1)[:, None], nl.arange(M)[None, :]], dtype=x.dtype)
    ones = nl.ones((nl.par_dim(1), 128), dtype=x.dtype)
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        x_t = nl.ndarray((n_k, nl.par_dim(kt), 128), dtype=x.dtype)  # x^T: K on partitions
        for kk in nl.affine_range(n_k):
            x_t[kk, ipk, ifr] = nl.load_transpose2d(x[i * 128 + ip, kk * kt + ifk], mask=(i * 128 + ifr < rows))
        for m in nl.affine_range(n_m):
            acc = nl.zeros((nl.par_dim(128), mt), dtype=nl.float32, buffer=nl.psum)
            for kk in nl.affine_range(n_k):
                acc += nisa.nc_matmul(x_t[kk, ipk, ifr], w_t[kk, ipk, m * mt + ifm])
            acc += nisa.nc_matmul(ones, bias[nl.arange(1)[:, None], m * mt + ifm])
            y = nisa.activation(op=nl.gelu, data=acc, dtype=x.dtype)
            nl.store(out[i * 128 + ip, m * mt + ifm], value=y, mask=live)
    return out


@nki.jit
def gelu_kernel(x):
    """x: (rows, cols). Returns gelu(x) (the erf form, Transformers' "gelu")."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    c = _chunk(cols, 2048)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(c)[None, :]
    for i in nl.affine_range(math.ceil(rows / 128)):
        live = i * 128 + ip < rows
        for j in nl.affine_range(cols // c):
            a = nl.load(x[i * 128 + ip, j * c + jf], mask=live, dtype=nl.float32)
            nl.store(out[i * 128 + ip, j * c + jf], value=nl.gelu(a, dtype=x.dtype), mask=live)
    return out
