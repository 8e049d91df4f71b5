"""Matrix multiplication `lhsT.T @ rhs` on the Tensor engine, blocked for
its limits: the contraction runs over the 128 partitions, a stationary tile
holds at most 128 output rows and a moving tile at most 512 output columns,
and `nisa.nc_matmul` accumulates the K tiles of one output block in an fp32
PSUM tile. The left operand comes K-major (`lhsT` is [K, M]), the layout the
Tensor engine reads; pass `a.T` for a row-major `a`.

Each rhs block is loaded once per column block and reused for every row
block (the loop order the DMA traffic favours). M, K and N are multiples of
128, 128 and 512.

    python -m examples.nki.matmul
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

TILE_M = nl.tile_size.gemm_stationary_fmax  # 128 output rows per stationary tile
TILE_K = nl.tile_size.pmax  # 128: the contraction runs over the partitions
TILE_N = nl.tile_size.gemm_moving_fmax  # 512 output columns per moving tile


@nki.jit
def matmul(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2, f"lhsT is [K, M] = {lhsT.shape} and rhs is [K, N] = {rhs.shape}: their K differ"
    assert M % TILE_M == 0 and K % TILE_K == 0 and N % TILE_N == 0, (
        f"M, K, N = {M}, {K}, {N} must be multiples of {TILE_M}, {TILE_K}, {TILE_N}"
    )
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    n_k = K // TILE_K
    for n in nl.affine_range(N // TILE_N):
        # the column block of rhs, all of K: [128, n_k, 512], K tile k at [:, k, :]
        rhs_block = nl.ndarray((TILE_K, n_k, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(n_k):
            nisa.dma_copy(dst=rhs_block[:, k, :], src=rhs[k * TILE_K : (k + 1) * TILE_K, n * TILE_N : (n + 1) * TILE_N])
        for m in nl.affine_range(M // TILE_M):
            lhs_block = nl.ndarray((TILE_K, n_k, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(n_k):
                nisa.dma_copy(
                    dst=lhs_block[:, k, :], src=lhsT[k * TILE_K : (k + 1) * TILE_K, m * TILE_M : (m + 1) * TILE_M]
                )
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in range(n_k):  # the first matmul into acc overwrites it, the others accumulate
                nisa.nc_matmul(dst=acc, stationary=lhs_block[:, k, :], moving=rhs_block[:, k, :], accumulate=k > 0)
            result = nl.ndarray((TILE_M, TILE_N), dtype=out.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=result, src=acc)
            nisa.dma_copy(dst=out[m * TILE_M : (m + 1) * TILE_M, n * TILE_N : (n + 1) * TILE_N], src=result)
    return out


def reference(lhsT, rhs):
    """The same product with fp32 accumulation, rounded once to the inputs' dtype."""
    return (lhsT.float().T @ rhs.float()).to(lhsT.dtype)


def main():
    torch.manual_seed(0)
    a, b = torch.rand(512, 1024, dtype=torch.bfloat16), torch.rand(1024, 1024, dtype=torch.bfloat16)
    out = matmul(a.to("neuron").T.contiguous(), b.to("neuron"))
    torch.testing.assert_close(out.cpu(), reference(a.T, b))
    print("matmul: matches PyTorch;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
