"""The NKI of 2024-25 (before NKI 0.3), which kernels written then still use:
`nl.load`/`nl.store`, `nl.load_transpose2d`, `nl.par_dim` blocked buffers,
`nl.mgrid` indices, `nl.matmul(transpose_x=True)` accumulated with `+=` into
PSUM, masks on partial tiles. Our kernels, checked against PyTorch."""

import nki
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import accumulation_tolerance

import torch_neuronx  # noqa: F401


@nki.jit
def blocked_matmul(lhs, rhs):
    """lhs [M, K] @ rhs [K, N], with lhs transposed on its way in (load_transpose2d)
    into a par_dim buffer of K tiles, and N split in tiles of 512 with a masked tail."""
    M, K = lhs.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    n_k = K // 128
    for m in nl.affine_range(M // 128):
        lhsT = nl.ndarray((n_k, nl.par_dim(128), 128), dtype=lhs.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(n_k):
            lhsT[k] = nl.load_transpose2d(lhs[m * 128 : (m + 1) * 128, k * 128 : (k + 1) * 128])
        for n in nl.affine_range((N + 511) // 512):
            i = nl.mgrid[0:128, 0:512]
            cols = n * 512 + i.x
            acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(n_k):
                r = nl.load(rhs[k * 128 + i.p, cols], mask=cols < N)
                acc += nl.matmul(lhsT[k], r, transpose_x=True, mask=cols < N)
            nl.store(out[m * 128 + i.p, cols], value=acc, mask=cols < N)
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_legacy_blocked_matmul(dtype):
    torch.manual_seed(0)
    a, b = torch.rand(256, 384, dtype=dtype), torch.rand(384, 700, dtype=dtype)
    out = blocked_matmul(a.to("neuron"), b.to("neuron"))
    torch.testing.assert_close(out.cpu(), (a.float() @ b.float()).to(dtype), **accumulation_tolerance(384, dtype))
    e = torch_neuronx.nki.last_estimate()
    assert e.flops == 2 * 256 * 384 * 700  # the masked tail tile multiplies only its 188 columns


@nki.jit
def row_softmax(x):
    """softmax(x) along rows: nl.max/nl.sum with keepdims, a masked tail tile."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:C]
    for t in nl.affine_range((R + 127) // 128):
        rows = t * 128 + ip
        tile = nl.load(x[rows, jf], mask=rows < R)
        e = nl.exp(tile - nl.max(tile, axis=1, keepdims=True, mask=rows < R), mask=rows < R)
        nl.store(out[rows, jf], value=e / nl.sum(e, axis=1, keepdims=True, mask=rows < R), mask=rows < R)
    return out


def test_legacy_masked_softmax():
    torch.manual_seed(0)
    x = torch.randn(200, 300)
    out = row_softmax(x.to("neuron"))
    torch.testing.assert_close(out.cpu(), torch.softmax(x, dim=1))
