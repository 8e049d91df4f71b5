# RMSNorm tutorial kernel (legacy `neuronxcc.nki` style): nl.arange indices, an HBM
# tensor .reshape, `mask=` on load/multiply/store for the partial last row tile, nl.square,
# nl.sum(axis=[1]) (result broadcast back along the free axis), nl.rsqrt, tile.broadcast_to
# (partition-axis broadcast) and `out_tile[...] = ...` assignment.
#
# Source: aws-neuron/aws-neuron-sdk, tag v2.26.0 (commit
#   49ee15c58418d5f19b2407bc7057a7beb77ab24a)
#   general/nki/examples/rmsnorm/rmsnorm_nki_kernels.py (tutorial page
#   general/nki/tutorials/rmsnorm.rst); identical to aws-neuron/nki-samples
#   src/nki_samples/tutorials/rmsnorm/rmsnorm_nki_kernels.py before its removal (ea163c9, Dec
#     2025).
# License: MIT-0 (the SDK's sample code is MIT-0 per LICENSE-SAMPLECODE and
#   LICENSE-SUMMARY-DOCS-SAMPLES; its prose docs are CC-BY-SA-4.0).
# Copyright (C) 2024, Amazon.com. All Rights Reserved.
# Changes to AWS's code: import lines only (each rewritten import keeps the original in a
#   comment; `import torch_neuronx` is added so that `nki` resolves to the emulator). The
#   original `if __name__ == "__main__":` driver is replaced by ours below (`reference`,
#   `main`), modeled on the tutorial's PyTorch driver.
# Tutorial sizes (rmsnorm_torch.py): a_tensor = torch.rand((250, 512)), g_tensor =
# torch.rand((512)), float32; torch.allclose(atol=1e-5, rtol=1e-3).
"""
Copyright (C) 2024, Amazon.com. All Rights Reserved

RMSNorm NKI kernel implementation.

"""

import numpy as np
# NKI_EXAMPLE_42_BEGIN
import math
import torch_neuronx  # noqa: F401  (ours) makes the `nki` emulator package importable
import nki  # original: import neuronxcc.nki as nki
import nki.language as nl  # original: import neuronxcc.nki.language as nl


@nki.jit
def nki_rmsnorm_kernel(a_tensor, g_tensor):
  # Calculate out_tensor = a_tensor/RMS(a_tensor) * g_tensor
  # Where RMS(a_tensor) = sqrt((1/N) * sum(a_tensor * a_tensor))
  # and N = a_tensor.shape[1]
  # Reduction (mean) is performed in the free (2nd) dimension
  out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype,
                          buffer=nl.shared_hbm)

  # Make sure shapes match
  assert a_tensor.shape[1] == g_tensor.shape[0]

  # Generate tensor indices to index input tensor
  ix = nl.arange(128)[:, None]
  iw = nl.arange(1)[:, None]
  iy = nl.arange(a_tensor.shape[1])[None, :]

  num_rows = a_tensor.shape[0]

  # Load RMSNorm weight once, reused by rows/tiles of a_tensor
  g_tile = nl.load(g_tensor.reshape((1, g_tensor.shape[0]))[iw, iy])

  # Process 128 rows at a time due to 128-partition tile size limitation
  # Since we're not reducing across the first dimension
  # Tiles can be processed independently
  for i in nl.affine_range(math.ceil(a_tensor.shape[0]/128)):

    # Load input data from external memory to on-chip memory
    a_tile = nl.load(a_tensor[i * 128 + ix, iy],
                    mask=(i * 128 + ix < num_rows))

    # Compute element-wise square of a_tensor
    in_square = nl.square(a_tile)

    # Calculate sum of squared elements, along last dimension
    square_sum = nl.sum(in_square, axis=[1])

    # Scale and get a reciprocal
    mean = square_sum / a_tensor.shape[1]

    # Take square root of mean and then reciprocal with
    # rsqrt API (one ISA instruction)
    rms_reciprocal = nl.rsqrt(mean)

    # Scale the input tensor
    out_tile = nl.multiply(a_tile, rms_reciprocal)

    # Broadcast weight along first axis to match tensor shape
    # num_rows_active = min(num_rows - i * 128, 128)
    g_bcast = g_tile.broadcast_to((128, g_tensor.shape[0]))

    # Multiply with the RMSNorm weight
    out_tile[...] = nl.multiply(out_tile, g_bcast,
                           mask=(i * 128 + ix < num_rows))

    # store the addition results back to external memory (out_tensor)
    nl.store(out_tensor[i * 128 + ix, iy], value=out_tile,
            mask=(i * 128 + ix < num_rows))

  return out_tensor
  # NKI_EXAMPLE_42_END


# ---------------------------------------------------------------------------
# Test driver (ours, not AWS code), after rmsnorm_torch.py.
# ---------------------------------------------------------------------------

def reference(a_tensor, g_tensor):
  # rmsnorm_torch.py's torch_rmsnorm_kernel
  import torch
  in_square = a_tensor.pow(2)
  mean = in_square.mean(dim=1, keepdim=True)
  tensor = a_tensor * torch.rsqrt(mean)
  return tensor * g_tensor


def main():
  import torch
  import torch_neuronx

  torch.manual_seed(0)
  a_tensor = torch.rand((250, 512), dtype=torch.float32)
  g_tensor = torch.rand((512), dtype=torch.float32)

  output_nki = nki_rmsnorm_kernel(a_tensor.to("neuron"), g_tensor.to("neuron"))

  torch.testing.assert_close(output_nki.cpu(), reference(a_tensor, g_tensor), atol=1e-5, rtol=1e-3)
  print("nki_rmsnorm_kernel (250, 512): NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
  main()
