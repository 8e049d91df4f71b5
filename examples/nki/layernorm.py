"""Layer normalization of the rows of a 2-D tensor:
(x - mean) / sqrt(var + eps) * gamma + beta.

Per tile of 128 rows, the Vector engine's statistics instructions take the
row's mean and variance in one pass: `bn_stats` over each chunk of at most
`nl.tile_size.bn_stats_fmax` (512) columns, then `bn_aggr` combines the
chunks. One `tensor_scalar` subtracts the mean and multiplies by
1/sqrt(var + eps); two `tensor_tensor` apply gamma and beta, loaded once and
broadcast over the partitions.

    python -m examples.nki.layernorm
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

ROWS = nl.tile_size.pmax
CHUNK = nl.tile_size.bn_stats_fmax


def _broadcast_rows(vector, n_cols):
    """A [128, n_cols] SBUF tile whose every partition holds `vector`."""
    t = nl.ndarray((ROWS, n_cols), dtype=vector.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=vector.ap([[0, ROWS], [1, n_cols]]))
    return t


@nki.jit
def layernorm(x, gamma, beta, eps=1e-5):
    n_rows, n_cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    g, b = _broadcast_rows(gamma, n_cols), _broadcast_rows(beta, n_cols)
    n_chunks = (n_cols + CHUNK - 1) // CHUNK
    for r0 in range(0, n_rows, ROWS):
        h = min(ROWS, n_rows - r0)
        row = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x[r0 : r0 + h, :])
        stats = nl.ndarray((h, 6 * n_chunks), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(n_chunks):
            c0, c1 = c * CHUNK, min(n_cols, (c + 1) * CHUNK)
            nisa.bn_stats(dst=stats[:, 6 * c : 6 * c + 6], data=row[:, c0:c1])
        mean_var = nl.ndarray((h, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mean_var, data=stats)
        rstd = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=rstd, data=mean_var[:, 1:2], op0=nl.add, operand0=eps)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=rstd)
        normed = nl.ndarray((h, n_cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=normed, data=row, op0=nl.subtract, operand0=mean_var[:, 0:1], op1=nl.multiply, operand1=rstd
        )
        nisa.tensor_tensor(dst=normed, data1=normed, data2=g[:h, :], op=nl.multiply)
        result = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=result, data1=normed, data2=b[:h, :], op=nl.add)
        nisa.dma_copy(dst=out[r0 : r0 + h, :], src=result)
    return out


def reference(x, gamma, beta, eps=1e-5):
    return torch.nn.functional.layer_norm(x.float(), x.shape[-1:], gamma.float(), beta.float(), eps).to(x.dtype)


def main():
    torch.manual_seed(0)
    x, gamma, beta = torch.randn(300, 1000), torch.rand(1000), torch.rand(1000)
    out = layernorm(*(t.to("neuron") for t in (x, gamma, beta)))
    torch.testing.assert_close(out.cpu(), reference(x, gamma, beta))
    print("layernorm: matches PyTorch;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
