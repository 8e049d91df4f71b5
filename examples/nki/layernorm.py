# LayerNorm tutorial kernels (legacy `neuronxcc.nki` style):
#   nki_layernorm_kernel_v1 - nki.language only (nl.mean, nl.square, nl.rsqrt, broadcasting);
#   nki_layernorm_kernel_v2 - nisa.bn_stats / nisa.bn_aggr (6-element stats per bn_stats
#     call, written at offsets j*6 of a (128, 6*n) SBUF tile) and nisa.tensor_scalar with two
#     per-partition operands (subtract mean, multiply rsqrt(var+eps)).
# Both use `mask=` for the partial last row tile, and v2 also masks the bn_stats free axis.
#
# Source: aws-neuron/aws-neuron-sdk, tag v2.26.0 (commit
#   49ee15c58418d5f19b2407bc7057a7beb77ab24a)
#   general/nki/examples/layernorm/layernorm_nki_kernel.py (tutorial page
#   general/nki/tutorials/layernorm.rst); identical to aws-neuron/nki-samples
#   src/nki_samples/tutorials/layernorm/layernorm_nki_kernel.py before its removal (ea163c9, Dec
#     2025).
# License: MIT-0 (the SDK's sample code is MIT-0 per LICENSE-SAMPLECODE and
#   LICENSE-SUMMARY-DOCS-SAMPLES; its prose docs are CC-BY-SA-4.0).
# Copyright (C) 2024, Amazon.com. All Rights Reserved.
# Changes to AWS's code: import lines only (each rewritten import keeps the original in a
#   comment; `import torch_neuronx` is added so that `nki` resolves to the emulator). The
#   original `if __name__ == "__main__":` driver is replaced by ours below (`reference`,
#   `main`), modeled on the tutorial's PyTorch driver.
# The original parse_args() is not kept (ours below has the same --nrows/--ncols flags).
# Tutorial sizes (layernorm_torch.py / layernorm_nki_kernel.py defaults): input
# torch.rand((4096, 8192)), gamma, beta torch.rand((8192)), float32, epsilon = 1e-5;
# torch.allclose(atol=1e-3, rtol=1e-2).
"""
Copyright (C) 2024, Amazon.com. All Rights Reserved

LayerNorm NKI kernel implementation.

"""
# NKI_EXAMPLE_45_BEGIN
import torch_neuronx  # noqa: F401  (ours) makes the `nki` emulator package importable
import nki  # original: import neuronxcc.nki as nki
import nki.language as nl  # original: import neuronxcc.nki.language as nl
import nki.isa as nisa  # original: import neuronxcc.nki.isa as nisa
import numpy as np
import math
# NKI_EXAMPLE_45_END
import os
import argparse


# NKI_EXAMPLE_45_BEGIN
@nki.jit
def nki_layernorm_kernel_v1(input_tensor, epsilon, gamma_vector, beta_vector):
  """Computes LayerNorm.
    Used nki.language APIs only.
  """
  output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype,
                             buffer=nl.shared_hbm)

  # Ensure that the shapes of tensors match
  assert input_tensor.shape[1] == gamma_vector.shape[0] == beta_vector.shape[0]

  # Generate tile indices for loading/storing data
  i_p_io = nl.arange(nl.tile_size.pmax)[:, None]
  i_f_io = nl.arange(input_tensor.shape[1])[None, :]
  i_p_param = nl.arange(1)[:, None]

  # Number of rows in the input tensor
  num_rows = input_tensor.shape[0]

  # Load gamma and beta, which will be reused across rows/tiles of input_tensor
  gamma_sb = nl.load(gamma_vector.reshape((1, gamma_vector.shape[0]))[i_p_param, i_f_io])
  beta_sb = nl.load(beta_vector.reshape((1, beta_vector.shape[0]))[i_p_param, i_f_io])

  # Broadcast the gamma and beta to match the dimensions of the tiles
  gamma_sb_bcast = gamma_sb.broadcast_to((nl.tile_size.pmax, gamma_vector.shape[0]))
  beta_sb_bcast = beta_sb.broadcast_to((nl.tile_size.pmax, beta_vector.shape[0]))

  # Tile partition dimension of the input tensor by nl.tile_size.pmax
  for i in nl.affine_range(math.ceil(input_tensor.shape[0]/nl.tile_size.pmax)):
    # Load input tile
    input_sb = nl.load(input_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io],
                       mask=(i * nl.tile_size.pmax + i_p_io < num_rows))

    # Compute mean and variance
    mean = nl.mean(input_sb, axis=1)
    # Trick to calculate var with mean: mean(x^2) - mean(x)^2
    var = nl.mean(nl.square(input_sb), axis=1) - mean * mean

    # Normalize the input by shifting with the mean 
    # and scaling with rsqrt of variance and epsilon
    shift_scale_tensor = (input_sb - mean) * nl.rsqrt(var + epsilon)
    
    # Scale the normalized tile using gamma and add beta
    output_sb = shift_scale_tensor * gamma_sb_bcast + beta_sb_bcast

    nl.store(output_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io], value=output_sb,
             mask=(i * nl.tile_size.pmax + i_p_io < num_rows))

  return output_tensor
  # NKI_EXAMPLE_45_END


# NKI_EXAMPLE_46_BEGIN
@nki.jit
def nki_layernorm_kernel_v2(input_tensor, epsilon, gamma_vector, beta_vector):
  """Computes LayerNorm.
    Used nki.isa APIs to calculate mean/variance and perform shift/scale.
  """
  output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype,
                             buffer=nl.shared_hbm)

  # Ensure that the shapes of tensors match
  assert input_tensor.shape[1] == gamma_vector.shape[0] == beta_vector.shape[0]

  # Generate tile indices for loading/storing data
  i_p_io = nl.arange(nl.tile_size.pmax)[:, None]
  i_f_io = nl.arange(input_tensor.shape[1])[None, :]
  i_p_param = nl.arange(1)[:, None]

  # Number of rows in the input tensor
  num_rows = input_tensor.shape[0]

  # Load gamma and beta, which will be reused across rows/tiles of input_tensor
  gamma_sb = nl.load(gamma_vector.reshape((1, gamma_vector.shape[0]))[i_p_param, i_f_io])
  beta_sb = nl.load(beta_vector.reshape((1, beta_vector.shape[0]))[i_p_param, i_f_io])

  # Broadcast the gamma and beta to match the dimensions of the tiles
  gamma_sb_bcast = gamma_sb.broadcast_to((nl.tile_size.pmax, gamma_vector.shape[0]))
  beta_sb_bcast = beta_sb.broadcast_to((nl.tile_size.pmax, beta_vector.shape[0]))

  # Tile partition dimension of the input tensor by nl.tile_size.pmax
  for i in nl.affine_range(math.ceil(input_tensor.shape[0]/nl.tile_size.pmax)):
    # Load input tile
    input_sb = nl.load(input_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io],
                       mask=(i * nl.tile_size.pmax + i_p_io < num_rows))

    # Tile free dimension of the input tensor by nl.tile_size.bn_stats_fmax, 
    # as bn_stats has a free dimension size limit
    i_f_bn = nl.arange(nl.tile_size.bn_stats_fmax)[None, :]
    i_f_stats = nl.arange(6)[None, :]
    num_bn_stats = math.ceil(input_tensor.shape[1]/nl.tile_size.bn_stats_fmax)
    stats_results = nl.ndarray((nl.tile_size.pmax, 6*num_bn_stats), dtype=np.float32)
    for j in nl.affine_range(num_bn_stats):
      stats_results[i_p_io, j * 6 + i_f_stats] = nisa.bn_stats(
              input_sb[i_p_io, j * nl.tile_size.bn_stats_fmax + i_f_bn],
              mask=(j * nl.tile_size.bn_stats_fmax + i_f_bn < input_tensor.shape[1]),
              dtype=np.float32)
      
    # Aggregate bn_stats results to compute mean and var
    i_f_aggr = nl.arange(6*num_bn_stats)[None, :]
    mean_var = nisa.bn_aggr(stats_results[i_p_io, i_f_aggr])
    mean = mean_var[i_p_io, 0]
    var = mean_var[i_p_io, 1]

    # Get reciprocal of sqrt(var + epsilon)
    scale_var = nl.rsqrt(var + epsilon)

    # Putting the shift and scale together in one line to trigger two alu_op tensor_vector instruction
    # shift_scale_tensor = (input_sb - mean_var[i_p_stats, i_f_mean]) * scale_var
    shift_scale_tensor = nisa.tensor_scalar(data=input_sb, op0=np.subtract,
                                            operand0=mean,
                                            op1=np.multiply,
                                            operand1=scale_var)
    
    # Scale the normalized tile using gamma and add beta
    output_sb = shift_scale_tensor * gamma_sb_bcast + beta_sb_bcast

    nl.store(output_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io], value=output_sb,
             mask=(i * nl.tile_size.pmax + i_p_io < num_rows))

  return output_tensor
  # NKI_EXAMPLE_46_END

# ---------------------------------------------------------------------------
# Test driver (ours, not AWS code), after layernorm_torch.py.
# ---------------------------------------------------------------------------

def reference(input_tensor, epsilon, gamma_vector, beta_vector):
  # layernorm_torch.py's layernorm_layer
  import torch
  mean = input_tensor.mean(dim=-1, keepdim=True)
  variance = input_tensor.var(dim=-1, keepdim=True, unbiased=False)
  normalized_input = (input_tensor - mean) / torch.sqrt(variance + epsilon)
  normalized_input = normalized_input * gamma_vector + beta_vector
  return normalized_input


def main(argv=()):
  """argv: command-line flags (--nrows, --ncols); the default () runs the tutorial's sizes."""
  import torch
  import torch_neuronx

  parser = argparse.ArgumentParser("Run the LayerNorm NKI tutorial kernels")
  parser.add_argument("--nrows", default=4*1024, type=int, help="The number of input rows")
  parser.add_argument("--ncols", default=8*1024, type=int, help="The number of input columns")
  args = parser.parse_args(list(argv))

  torch.manual_seed(0)
  num_rows, num_cols = args.nrows, args.ncols
  input_tensor = torch.rand((num_rows, num_cols), dtype=torch.float32)
  gamma_vector = torch.rand((num_cols), dtype=torch.float32)
  beta_vector = torch.rand((num_cols), dtype=torch.float32)
  epsilon = 1e-5

  output_torch = reference(input_tensor, epsilon, gamma_vector, beta_vector)
  dev_in = input_tensor.to("neuron")
  dev_gamma, dev_beta = gamma_vector.to("neuron"), beta_vector.to("neuron")

  for func in (nki_layernorm_kernel_v1, nki_layernorm_kernel_v2):
    output_nki = func(dev_in, epsilon, dev_gamma, dev_beta)
    torch.testing.assert_close(output_nki.cpu(), output_torch, atol=1e-3, rtol=1e-2)
    print(f"{getattr(func, '__name__', func)} ({num_rows}, {num_cols}): NKI and Torch match")
    print(torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
  import sys
  main(sys.argv[1:])
