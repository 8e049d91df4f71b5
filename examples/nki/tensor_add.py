# SPMD tensor addition tutorial kernel (legacy `neuronxcc.nki` style: nl.load /
# nl.store, nl.arange indices, nl.program_id, launched as kernel[grid_x, grid_y]).
#
# Source: aws-neuron/aws-neuron-sdk, tag v2.26.0 (commit
#   49ee15c58418d5f19b2407bc7057a7beb77ab24a)
#   general/nki/examples/tensor_addition/spmd_tensor_addition_nki_kernels.py
#   (tutorial page general/nki/tutorials/spmd_tensor_addition.rst; the same kernel is in
#   aws-neuron/nki-samples src/nki_samples/tutorials/tensor_addition/, MIT-0)
# License: MIT-0 (the SDK's sample code is MIT-0 per LICENSE-SAMPLECODE and
#   LICENSE-SUMMARY-DOCS-SAMPLES; its prose docs are CC-BY-SA-4.0).
# Copyright (C) 2024, Amazon.com. All Rights Reserved.
# Changes to AWS's code: import lines only (each rewritten import keeps the original in a
#   comment; `import torch_neuronx` is added so that `nki` resolves to the emulator). The
#   original `if __name__ == "__main__":` driver is replaced by ours below (`reference`,
#   `main`), modeled on the tutorial's PyTorch driver.
# Tutorial sizes (spmd_tensor_addition_torch.py): a, b = torch.rand((256, 1024), bfloat16),
# grid (256 // 128, 1024 // 512) = (2, 2); check torch.allclose(atol=1e-4, rtol=1e-2).
"""
Copyright (C) 2024, Amazon.com. All Rights Reserved

NKI implementation for SPMD tensor addition NKI tutorial.

"""
import numpy as np
# NKI_EXAMPLE_27_BEGIN
import torch_neuronx  # noqa: F401  (ours) makes the `nki` emulator package importable
import nki  # original: import neuronxcc.nki as nki
import nki.language as nl  # original: import neuronxcc.nki.language as nl


@nki.jit
def nki_tensor_add_kernel_(a_input, b_input):
  """NKI kernel to compute element-wise addition of two input tensors

  This kernel assumes strict input/output sizes can be uniformly tiled to [128,512]

  Args:
      a_input: a first input tensor
      b_input: a second input tensor

  Returns:
      c_output: an output tensor
  """
  # Create output tensor shared between all SPMD instances as result tensor
  c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

  # Calculate tile offsets based on current 'program'
  offset_i_x = nl.program_id(0) * 128
  offset_i_y = nl.program_id(1) * 512

  # Generate tensor indices to index tensors a and b
  ix = offset_i_x + nl.arange(128)[:, None]
  iy = offset_i_y + nl.arange(512)[None, :]

  # Load input data from device memory (HBM) to on-chip memory (SBUF)
  # We refer to an indexed portion of a tensor as an intermediate tensor
  a_tile = nl.load(a_input[ix, iy])
  b_tile = nl.load(b_input[ix, iy])

  # compute a + b
  c_tile = a_tile + b_tile

  # store the addition results back to device memory (c_output)
  nl.store(c_output[ix, iy], value=c_tile)

  # Transfer the ownership of `c_output` to the caller
  return c_output
  # NKI_EXAMPLE_27_END


# NKI_EXAMPLE_28_BEGIN
def nki_tensor_add(a_input, b_input):
  """NKI kernel caller to compute element-wise addition of two input tensors

  This kernel caller lifts tile-size restriction, by applying the kernel on tiles of the inputs/outputs

  Args:
      a_input: a first input tensor, of shape [N*128, M*512]
      b_input: a second input tensor, of shape [N*128, M*512]

  Returns:
      a tensor of shape [N*128, M*512], the result of a_input + b_input
  """

  # The SPMD launch grid denotes the number of kernel instances.
  # In this case, we use a 2D grid where the size of each invocation is 128x512
  grid_x = a_input.shape[0] // 128
  grid_y = a_input.shape[1] // 512

  return nki_tensor_add_kernel_[grid_x, grid_y](a_input, b_input)
  # NKI_EXAMPLE_28_END

# ---------------------------------------------------------------------------
# Test driver (ours, not AWS code), after spmd_tensor_addition_torch.py.
# ---------------------------------------------------------------------------

def reference(a_input, b_input):
  return a_input + b_input


def main():
  import torch
  import torch_neuronx

  torch.manual_seed(0)
  a = torch.rand((256, 1024), dtype=torch.bfloat16)
  b = torch.rand((256, 1024), dtype=torch.bfloat16)

  output_nki = nki_tensor_add(a.to("neuron"), b.to("neuron"))

  torch.testing.assert_close(output_nki.cpu(), reference(a, b), atol=1e-4, rtol=1e-2)
  print("nki_tensor_add (grid (2, 2)): NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
  main()
