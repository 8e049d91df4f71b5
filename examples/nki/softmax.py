"""Softmax along the last dimension of a 2-D tensor, one tile of 128 rows
at a time (the last tile may be partial), the whole row in SBUF:

- the Vector engine takes each row's maximum, negated (`tensor_reduce`);
- the Scalar engine computes exp(x - max) and, in the same pass, the row's
  sum (`activation_reduce` with the negated maximum as its bias);
- the Vector engine takes the sum's reciprocal and scales the row by it.

Intermediates are fp32 whatever the input dtype; the output has the input's.

    python -m examples.nki.softmax
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

ROWS = nl.tile_size.pmax


@nki.jit
def softmax(x):
    n_rows, n_cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for r0 in range(0, n_rows, ROWS):
        h = min(ROWS, n_rows - r0)
        row = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x[r0 : r0 + h, :])
        neg_max = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=row, axis=1, negate=True)
        exp = nl.ndarray((h, n_cols), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=exp, op=nl.exp, data=row, bias=neg_max, reduce_op=nl.add, reduce_res=total)
        inv = nl.ndarray((h, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        result = nl.ndarray((h, n_cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=result, data=exp, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[r0 : r0 + h, :], src=result)
    return out


def reference(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def main():
    torch.manual_seed(0)
    x = torch.randn(300, 1000)
    out = softmax(x.to("neuron"))
    torch.testing.assert_close(out.cpu(), reference(x))
    print("softmax: matches PyTorch;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
