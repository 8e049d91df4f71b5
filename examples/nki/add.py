"""Elementwise addition of two 2-D tensors: the smallest kernel that moves
data HBM -> SBUF -> HBM (`nisa.dma_copy`) and computes on the Vector engine
(`nisa.tensor_tensor`). Tiles are 128 rows (the partitions) by 512 columns;
the last row and column tiles may be partial, so any shape runs.

    python -m examples.nki.add
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

ROWS, COLS = nl.tile_size.pmax, 512


@nki.jit
def add(a, b):
    assert a.shape == b.shape and len(a.shape) == 2, f"add takes two 2-D tensors of one shape, got {a.shape}, {b.shape}"
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    n_rows, n_cols = a.shape
    for r0 in range(0, n_rows, ROWS):
        for c0 in range(0, n_cols, COLS):
            h, w = min(ROWS, n_rows - r0), min(COLS, n_cols - c0)
            ta = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
            tb = nl.ndarray((h, w), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[r0 : r0 + h, c0 : c0 + w])
            nisa.dma_copy(dst=tb, src=b[r0 : r0 + h, c0 : c0 + w])
            tc = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[r0 : r0 + h, c0 : c0 + w], src=tc)
    return out


def reference(a, b):
    return a + b


def main():
    torch.manual_seed(0)
    a, b = torch.randn(300, 1000), torch.randn(300, 1000)
    out = add(a.to("neuron"), b.to("neuron"))
    torch.testing.assert_close(out.cpu(), reference(a, b), rtol=0, atol=0)
    print("add: matches PyTorch bitwise;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
