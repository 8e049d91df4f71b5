"""RMSNorm of the rows of a 2-D tensor: x / sqrt(mean(x^2) + eps) * gamma.

`rmsnorm(x, gamma)` runs on one NeuronCore. `rmsnorm[2](x, gamma)` runs on a
logical NeuronCore of two physical cores (LNC=2, Trainium2's default): each
core takes every other 128-row tile, chosen by `nl.program_id(0)` of
`nl.num_programs(0)`, and both write one output. The emulator runs the two
programs one after the other; their work and the estimate are the chip's.

Per tile of 128 rows: the Scalar engine squares the row and sums it in one
pass (`activation_reduce`), the Vector engine turns the sum into
1/sqrt(sum/n + eps) (`tensor_scalar`, then `activation` with rsqrt), and
scales the row by it and by gamma. gamma is loaded once, broadcast over the
128 partitions by an access pattern of partition stride 0 (`gamma.ap`).

    python -m examples.nki.rmsnorm
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

ROWS = nl.tile_size.pmax


@nki.jit
def rmsnorm(x, gamma, eps=1e-6):
    n_rows, n_cols = x.shape
    assert tuple(gamma.shape) in ((n_cols,), (1, n_cols)), f"gamma must hold {n_cols} values, got {gamma.shape}"
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    core, n_cores = nl.program_id(0), nl.num_programs(0)

    g = nl.ndarray((ROWS, n_cols), dtype=gamma.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.ap([[0, ROWS], [1, n_cols]]))  # every partition reads the same row

    for r0 in range(core * ROWS, n_rows, n_cores * ROWS):
        h = min(ROWS, n_rows - r0)
        row = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x[r0 : r0 + h, :])
        squares = nl.ndarray((h, n_cols), dtype=nl.float32, buffer=nl.sbuf)
        sum_sq = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=squares, op=nl.square, data=row, reduce_op=nl.add, reduce_res=sum_sq)
        rstd = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=rstd, data=sum_sq, op0=nl.multiply, operand0=1.0 / n_cols, op1=nl.add, operand1=eps)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=rstd)
        normed = nl.ndarray((h, n_cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=normed, data=row, op0=nl.multiply, operand0=rstd)
        result = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=result, data1=normed, data2=g[:h, :], op=nl.multiply)
        nisa.dma_copy(dst=out[r0 : r0 + h, :], src=result)
    return out


def reference(x, gamma, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.square().mean(dim=-1, keepdim=True) + eps) * gamma.float().reshape(-1)).to(x.dtype)


def main():
    torch.manual_seed(0)
    x, gamma = torch.randn(300, 1024), torch.rand(1024)
    for cores in (1, 2):
        kernel = rmsnorm if cores == 1 else rmsnorm[2]
        out = kernel(x.to("neuron"), gamma.to("neuron"))
        torch.testing.assert_close(out.cpu(), reference(x, gamma))
        print(f"rmsnorm on {cores} core(s): matches PyTorch;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
