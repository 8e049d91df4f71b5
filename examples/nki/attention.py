# Attention forward kernels (legacy `neuronxcc.nki` style):
#   fused_self_attn_for_SD_small_head_size - the fused self-attention tutorial kernel
#     (softmax(Q K^T * 0.125) V, d_head <= 128): par_dim buffers with a block dimension
#     in front of ((n, par_dim(d), 128)) or a free block dimension after the partition
#     ((par_dim(128), n, d)), nl.load_transpose2d, keyword-only nisa.nc_matmul(moving=,
#     stationary=) accumulated with `+=` into nl.zeros PSUM tiles, nisa.tensor_reduce(np.max,
#     negate=True), nisa.activation(np.exp, bias=...), nisa.nc_transpose, tile.broadcast_to,
#     an optional nisa.affine_select causal mask, and a transposing nl.store
#     (out_ref[i*128 + if_out, ip_out] with ip_out on the partition axis).
#   attn_fwd_v1 / attn_fwd_v2 - the two untiled steps (seqlen = d_head = 128) of the
#     attention performance tutorial: v1 with nki.language only (nl.matmul with
#     transpose_x=True/False, nl.transpose, nl.max/nl.sum/nl.divide), v2 with nki.isa
#     (nc_matmul, tensor_reduce(op=nl.max), tensor_scalar(engine=nisa.vector_engine),
#     activation, reciprocal, nc_transpose, tensor_copy).
#
# Sources: aws-neuron/aws-neuron-sdk, tag v2.26.0 (commit
#   49ee15c58418d5f19b2407bc7057a7beb77ab24a)
#   general/nki/examples/sd_attention/sd_attention_nki_kernels.py (NKI_EXAMPLE_31; tutorial
#     page general/nki/tutorials/fused-self-attn.rst; aws-neuron/nki-samples had the same kernel
#     in src/nki_samples/tutorials/sd_attention/ until ea163c9, Dec 2025, with
#     on_false_value=-9984.0 instead of nl.fp32.min), and
#   general/nki/examples/attention/attention_kernels.py (attn_fwd_v1, attn_fwd_v2 only; the
#     file is unchanged in v2.29.0 nki/examples/attention/, test_attention.py drives it).
# License: MIT-0 (the SDK's sample code is MIT-0 per LICENSE-SAMPLECODE and
#   LICENSE-SUMMARY-DOCS-SAMPLES; its prose docs are CC-BY-SA-4.0).
# Copyright (C) 2024-2025, Amazon.com. All Rights Reserved.
# Changes to AWS's code: import lines only (`import torch_neuronx` added; `nki.typing` is
# imported if the emulator has it; sd_attention's `import argparse` and `from scipy.special
# import softmax` are commented out, as only its dropped numpy driver used them). The
# drivers (parse_args, cpu_golden_attn, __main__, test_attention.py) are replaced by ours.
# Tutorial sizes: SD attention (sd_attention_torch.py): q, k, v = torch.rand((4096, 64)),
# float32, mixed_precision=True (bf16 TensorE operands), torch.allclose(atol=1e-5, rtol=1e-3).
# attn_fwd_v1/v2 (test_attention.py): q, k, v of shape (d_head=128, seqlen=128), uniform in
# [-1, 1), float32, np.allclose(atol=1e-2).
"""
Copyright (C) 2024, Amazon.com. All Rights Reserved

Stable Diffusion Attention NKI kernel implementation.

"""
import torch_neuronx  # noqa: F401  (ours) makes the `nki` emulator package importable
import nki  # original: import neuronxcc.nki as nki
import nki.language as nl  # original: import neuronxcc.nki.language as nl
from nki.language import par_dim  # original: from neuronxcc.nki.language import par_dim
import nki.isa as nisa  # original: import neuronxcc.nki.isa as nisa
import numpy as np
# original: import argparse  (only used by the original driver)
# original: from scipy.special import softmax  (only used by the original driver)

# NKI_EXAMPLE_31_BEGIN
@nki.jit
def fused_self_attn_for_SD_small_head_size(q_ref, k_ref, v_ref, use_causal_mask=False,
                                           mixed_precision=True):
  """
  Fused self attention kernel for small head dimension Stable Diffusion workload, 
  simplified for this tutorial. 
  
  Computes softmax(QK^T)V. Decoder model can optionally include a causal mask 
  application. Does not include QKV projection, output projection, dropout, 
  residual connection, etc.

  This kernel is designed to be used for Stable Diffusion models where the 
  d_head is smaller or equal to 128. Assertion is thrown if `d_head` does
  not satisfy the requirement.

  IO tensor layouts:
   - q_ptr: shape   (seq_q, d_head)
   - k_ptr: shape   (seq_k, d_head)
   - v_ptr: shape   (seq_v, d_head)
   - out_ptr: shape (seq_q, d_head)
   - We use seq_q and seq_k and seq_v just for clarity, this kernel requires 
   seq_q == seq_k == seq_v

  IO tensor dtypes:
   - This kernel assumes all IO tensors have the same dtype
   - If mixed_precision is True, then all Tensor Engine operation will be performed in
   bfloat16 and accumulation will be performed in float32. Otherwise the intermediates
   will be in the same type as the inputs.
  """
  # Use q_ref dtype as the intermediate tensor dtype
  # Assume all IO tensors have the same dtype
  kernel_dtype = q_ref.dtype
  pe_in_dt = nl.bfloat16 if mixed_precision else np.float32
  assert q_ref.dtype == k_ref.dtype == v_ref.dtype

  # Shape checking
  seqlen, d_head = q_ref.shape
  assert d_head <= 128, "Cannot use this kernel for d_head > 128"
  assert tuple(q_ref.shape) == (seqlen, d_head), 'Input shape mismatch!'
  assert tuple(k_ref.shape) == (seqlen, d_head), 'Input shape mismatch!'
  assert tuple(v_ref.shape) == (seqlen,d_head), \
  f'Input shape mismatch! Expected: {(seqlen, d_head)} Actual: {tuple(v_ref.shape)}'
  out_ref = nl.ndarray((seqlen, d_head), dtype=q_ref.dtype, buffer=nl.shared_hbm)

  # Softmax scaling factor, multiplied onto Q
  softmax_scale = 0.125

  q_seq_n_tiles, q_seq_tile_size = seqlen // 128, 128
  k_seq_n_tiles, k_seq_tile_size = seqlen // 128, 128
  # No tiling on d_head dimension since the dimension of d_head fits in SB
  d_head_tile_size = d_head
  v_seq_n_tiles, v_seq_tile_size = seqlen // 128, 128

  ###################################
  # Step 1. transpose(tensor_v)
  ###################################
  # Buffer for v matrix transposed
  # Pre-fetch and keep it in SBUF throughout different softmax tiles
  trans_v = nl.ndarray((par_dim(v_seq_tile_size), v_seq_n_tiles, d_head), dtype=pe_in_dt)

  for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):
    ip_v = nl.arange(v_seq_tile_size)[:, None]
    if_v = nl.arange(d_head_tile_size)[None, :]
    trans_v[ip_v, i_k_seq_tile, if_v] = nl.load(
      v_ref[i_k_seq_tile * k_seq_tile_size + ip_v, if_v],
      dtype=pe_in_dt)

  q_local = nl.ndarray((q_seq_n_tiles, par_dim(d_head_tile_size), q_seq_tile_size), dtype=pe_in_dt)
  ip_q = nl.arange(d_head_tile_size)[:, None]
  if_q = nl.arange(q_seq_tile_size)[None, :]
  for i_q_seq_tile in nl.affine_range(q_seq_n_tiles):
    q_local[i_q_seq_tile, ip_q, if_q] = nl.load_transpose2d(
      q_ref[i_q_seq_tile * q_seq_tile_size + nl.arange(q_seq_tile_size)[:, None],
            nl.arange(d_head_tile_size)[None, :]
      ],
      dtype=pe_in_dt) * softmax_scale

  k_local = nl.ndarray((k_seq_n_tiles, par_dim(d_head_tile_size), k_seq_tile_size), dtype=pe_in_dt)
  ip_k = nl.arange(d_head_tile_size)[:, None]
  if_k = nl.arange(k_seq_tile_size)[None, :]
  for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):
    k_local[i_k_seq_tile, ip_k, if_k] = nl.load_transpose2d(
      k_ref[i_k_seq_tile * k_seq_tile_size + nl.arange(k_seq_tile_size)[:, None],
            nl.arange(d_head_tile_size)[None, :]],
      dtype=pe_in_dt)

  for i_q_seq_tile in nl.affine_range(q_seq_n_tiles):  # indent = 2
    # A SBUF buffer for an independent softmax tile
    qk_res_buf = nl.ndarray((par_dim(q_seq_tile_size), seqlen), dtype=kernel_dtype)

    neg_max_res = nl.ndarray((par_dim(q_seq_tile_size), k_seq_n_tiles), dtype=kernel_dtype)
    ip_max = nl.arange(q_seq_tile_size)[:, None]
    if_max = nl.arange(k_seq_n_tiles)[None, :]

    # Loop over RHS free of matmul(stationary=tensor_q, moving=tensor_k, contract=d_head)
    for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):  # indent = 4

      # Since the K^T tile is the RHS, the q_seq_len dimension will be P in the result
      # PSUM buffer shape: [q_seq_tile_size P, k_seq_tile_size F]
      qk_psum = nl.zeros((par_dim(q_seq_tile_size), k_seq_tile_size),
                         dtype=np.float32, buffer=nl.psum)

      # Tensor indices for accessing qk result in k_seq_tile_size
      ip_qk = nl.arange(q_seq_tile_size)[:, None]
      if_qk = nl.arange(k_seq_tile_size)[None, :]

      ##############################################################
      # Step 2. matmul(stationary=tensor_q, moving=tensor_k, contract=d_head)
      ##############################################################
      qk_psum[ip_qk, if_qk] += nisa.nc_matmul(moving=k_local[i_k_seq_tile, ip_k, if_k],
                                              stationary=q_local[i_q_seq_tile, ip_q, if_q])

      ###################################
      # Step 3. Apply optional causal mask
      ###################################
      if use_causal_mask:
        # Magic number nl.fp32.min to replace -inf similar to what neuronx-cc uses
        qk_res_buf[ip_qk, i_k_seq_tile * k_seq_tile_size + if_qk] = nisa.affine_select(
          pred=(i_q_seq_tile * q_seq_tile_size + ip_qk >= i_k_seq_tile * k_seq_tile_size + if_qk),
          on_true_tile=qk_psum[ip_qk, if_qk], on_false_value=nl.fp32.min, dtype=kernel_dtype)
      else:
        # Simply send psum result back to sbuf
        qk_res_buf[ip_qk, i_k_seq_tile * k_seq_tile_size + if_qk] = nl.copy(qk_psum[ip_qk, if_qk],
                                                                              dtype=kernel_dtype)

      ###################################
      # Step 4. Softmax
      ###################################
      neg_max_res[ip_max, i_k_seq_tile] = nisa.tensor_reduce(
        np.max, data=qk_res_buf[ip_qk, i_k_seq_tile * k_seq_tile_size + if_qk],
        axis=(1,), dtype=kernel_dtype, negate=True)

    neg_max_res_final = nisa.tensor_reduce(
      np.min, data=neg_max_res[ip_max, if_max],
      axis=(1,), dtype=kernel_dtype, negate=False)

    ip_softmax = nl.arange(q_seq_tile_size)[:, None]
    if_softmax = nl.arange(seqlen)[None, :]
    ip_sum_res = nl.arange(q_seq_tile_size)[:, None]
    if_sum_res = nl.arange(d_head_tile_size)[None, :]

    softmax_res = nl.ndarray((par_dim(q_seq_tile_size), seqlen), dtype=pe_in_dt)
    sum_divisor = nl.ndarray((par_dim(q_seq_tile_size), d_head_tile_size), dtype=kernel_dtype)

    # Simply use a large tile of seq_len in size since this is a "blocking" instruction
    # Assuming the compiler will merge exp and reduce_add into a single instruction on ACT
    exp_res = nisa.activation(np.exp,
                              data=qk_res_buf[ip_softmax, if_softmax],
                              bias=neg_max_res_final, scale=1.0)

    sum_res = nisa.tensor_reduce(np.add, data=exp_res, axis=(1,),
                          dtype=kernel_dtype)
    softmax_res[ip_softmax, if_softmax] = nl.copy(exp_res, dtype=pe_in_dt)

    sum_reciprocal_broadcast = (1.0 / sum_res).broadcast_to((q_seq_tile_size, d_head_tile_size))
    sum_divisor[ip_sum_res, if_sum_res] = nl.copy(sum_reciprocal_broadcast, dtype=kernel_dtype)

    # Buffer for transposed softmax results (FP32 in PSUM)
    trans_softmax_res = nl.ndarray(
      (par_dim(k_seq_tile_size), k_seq_n_tiles, q_seq_tile_size),
      dtype=pe_in_dt)

    # Result psum buffer has the hidden dim as P
    attn_res_psum = nl.zeros((par_dim(d_head_tile_size), q_seq_tile_size),
                             dtype=np.float32, buffer=nl.psum)

    ip_scores_t = nl.arange(k_seq_tile_size)[:, None]
    if_scores_t = nl.arange(q_seq_tile_size)[None, :]
    # Loop over matmul_1 contraction
    for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):
      ###################################
      # Step 5. transpose(softmax_res)
      ###################################
      ip_scores = nl.arange(q_seq_tile_size)[:, None]
      if_scores = nl.arange(k_seq_tile_size)[None, :]

      trans_softmax_res[ip_scores_t, i_k_seq_tile, if_scores_t] = nisa.nc_transpose(
        softmax_res[ip_scores, i_k_seq_tile * k_seq_tile_size + if_scores])

    ip_out = nl.arange(d_head_tile_size)[:, None]
    if_out = nl.arange(q_seq_tile_size)[None, :]
    for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):
      ######################################################################
      # Step 6. matmul_1(stationary=trans_v, moving=trans_softmax_res, contract=seqlen_v=seqlen_k)
      ######################################################################
      ip_v_t = nl.arange(k_seq_tile_size)[:, None]
      if_v_t = nl.arange(d_head_tile_size)[None, :]
      attn_res_psum[ip_out, if_out] += \
        nisa.nc_matmul(moving=trans_softmax_res[ip_scores_t, i_k_seq_tile, if_scores_t],
                       stationary=trans_v[ip_v_t, i_k_seq_tile, if_v_t])

    attn_res_sbuf = nl.copy(attn_res_psum[ip_out, if_out], dtype=kernel_dtype)

    attn_res_div = attn_res_sbuf * nisa.nc_transpose(sum_divisor[ip_sum_res, if_sum_res])

    nl.store(
      out_ref[i_q_seq_tile * q_seq_tile_size + if_out, ip_out],
      value=attn_res_div)

  return out_ref
# NKI_EXAMPLE_31_END


# ---- from general/nki/examples/attention/attention_kernels.py (imports, then v1 and v2) ----
import numpy as np
import nki  # original: from neuronxcc import nki
import nki.isa as nisa  # original: import neuronxcc.nki.isa as nisa
import nki.language as nl  # original: import neuronxcc.nki.language as nl
try:
    import nki.typing as nt  # original: import neuronxcc.nki.typing as nt
except ImportError:  # (ours) `nt` only appears in local-variable annotations, never evaluated
    nt = None
# original (not kept, unused by v1/v2): import os, torch, logging;
# from neuronxcc.nki.language import par_dim; os.environ["NEURON_FRAMEWORK_DEBUG"] = "1"


####################################################################
# v1: toy example with 128 seqlen and nki.lang APIs
####################################################################
@nki.jit
def attn_fwd_v1(q, k, v):
    """nki.lang APIs"""
    d_head, seqlen_q = q.shape
    seqlen_kv = seqlen_q
    
    assert q.shape == k.shape == v.shape
    assert d_head == 128
    assert seqlen_q == 128
    
    kernel_out = nl.ndarray((seqlen_q, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
   
    # load inputs into SBUF:
    q_sbuf = nl.load(q)
    k_sbuf = nl.load(k)
    v_sbuf = nl.load(v)
    
    # Q @ K, contract along d_head #
    qk: nt.tensor[seqlen_q, seqlen_kv] = nl.matmul(x=q_sbuf, y=k_sbuf, transpose_x=True)
    
    # Softmax #
    # reduce max along seqlen_k
    row_max = nl.max(qk, axis=1)
    
    # subtract max from row
    norm_row = nl.subtract(qk, row_max)
    
    # exponentiation
    exp_row = nl.exp(norm_row)
    
    # sum of exp results
    sum_row = nl.sum(exp_row, axis=1)
    
    # divide exp results by sum
    scores: nt.tensor[seqlen_q, seqlen_kv] = nl.divide(exp_row, sum_row)
    
    # v has the wrong layout
    v_sbuf_t: nt.tensor[seqlen_kv, d_head] = nl.transpose(v_sbuf)
    
    # scores @ V, contract along seqlen_kv
    attn_out: nt.tensor[seqlen_q, d_head] = nl.matmul(scores, v_sbuf_t, transpose_x=False)
    
    # store output
    nl.store(dst=kernel_out, value=attn_out)
    return kernel_out

####################################################################
# v2: use nki.isa APIs
####################################################################
@nki.jit
def attn_fwd_v2(q, k, v):
    d_head, seqlen_q = q.shape
    seqlen_kv = seqlen_q
    assert q.shape == k.shape == v.shape
    assert d_head == 128
    assert seqlen_q == 128
    kernel_out = nl.ndarray((seqlen_q, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    # load inputs into SBUF:
    q_sbuf = nl.load(q)
    k_sbuf = nl.load(k)
    v_sbuf = nl.load(v)
    # Q @ K, contract along d_head #
    qk: nt.tensor[seqlen_q, seqlen_kv] = nisa.nc_matmul(stationary=q_sbuf,
                                                        moving=k_sbuf)
    # Softmax #
    # reduce max along seqlen_kv, dimension: [seqlen_q, 1]
    row_max = nisa.tensor_reduce(op=nl.max, data=qk, axis=1)
    # subtract max from row, dimension: [seqlen_q, seqlen_kv]
    norm_row = nisa.tensor_scalar(data=qk,
                                op0=nl.subtract,
                                operand0=row_max,
                                engine=nisa.vector_engine)
    # exponentiation, dimension: [seqlen_q, seqlen_kv]
    exp_row = nisa.activation(op=nl.exp, data=norm_row, bias=None, scale=1.0)
    # sum of exp results, dimension: [seqlen_q, 1]
    sum_row = nisa.tensor_reduce(op=nl.add,
                                data=exp_row,
                                axis=1)
    # reciprocal of sum_row, dimension: [seqlen_q, 1]
    inverse_sum_row = nisa.reciprocal(data=sum_row)
    scores: nt.tensor[seqlen_q, seqlen_kv] = nisa.tensor_scalar(data=exp_row,
                                    op0=nl.multiply,
                                    operand0=inverse_sum_row,
                                    engine=nisa.vector_engine,
                                    dtype=q.dtype)
    # v has the wrong layout
    v_psum_t = nisa.nc_transpose(v_sbuf)          # TensorE
    # dimension: [seqlen_kv, d_head]
    v_sbuf_t = nisa.tensor_copy(v_psum_t)         # ScalarE
    # scores has the wrong layout
    scores_psum_t = nisa.nc_transpose(scores)          # TensorE
    # dimension: [seqlen_kv, seqlen_q]
    scores_sbuf_t = nisa.tensor_copy(scores_psum_t)    # ScalarE
    # scores @ V, contract along seqlen_kv
    attn_out: nt.tensor[seqlen_q, d_head] = nisa.nc_matmul(stationary=scores_sbuf_t,
                                                           moving=v_sbuf_t)
    # store output
    nl.store(dst=kernel_out, value=attn_out)
    return kernel_out


# ---------------------------------------------------------------------------
# Test driver (ours, not AWS code), after sd_attention_torch.py and test_attention.py.
# ---------------------------------------------------------------------------

def reference(q, k, v, use_causal_mask=False):
  """fused_self_attn_for_SD_small_head_size: softmax((q * 0.125) @ k.T) @ v, q/k/v (seqlen, d_head)."""
  # sd_attention_torch.py's cpu_golden_attn (+ the optional causal mask, ours)
  import torch
  softmax_scale = 0.125
  q_scaled = q * softmax_scale
  raw_score = torch.matmul(q_scaled, k.transpose(1, 0))
  if use_causal_mask:
    future = torch.ones_like(raw_score, dtype=torch.bool).triu(diagonal=1)
    raw_score = raw_score.masked_fill(future, float("-inf"))
  norm_score = torch.nn.functional.softmax(raw_score, dim=-1)
  return torch.matmul(norm_score, v)


def reference_attn_fwd(q, k, v):
  """attn_fwd_v1/v2: q, k, v are (d_head, seqlen); returns softmax(q.T @ k) @ v.T, (seqlen, d_head)."""
  # test_attention.py's numpy_attention, in torch
  import torch
  qk = torch.matmul(q.T, k)
  row_max = torch.max(qk, dim=1, keepdim=True).values
  exp_row = torch.exp(qk - row_max)
  scores = exp_row / torch.sum(exp_row, dim=1, keepdim=True)
  return torch.matmul(scores, v.T)


def main():
  import torch
  import torch_neuronx

  torch.manual_seed(0)

  # Fused SD self-attention, tutorial size (4096, 64) float32, mixed precision (default)
  q_tensor = torch.rand((4096, 64), dtype=torch.float32)
  k_tensor = torch.rand((4096, 64), dtype=torch.float32)
  v_tensor = torch.rand((4096, 64), dtype=torch.float32)
  output_nki = fused_self_attn_for_SD_small_head_size(
      q_tensor.to("neuron"), k_tensor.to("neuron"), v_tensor.to("neuron"))
  # the tutorial's own tolerance (it holds on hardware with bf16 TensorE operands)
  torch.testing.assert_close(output_nki.cpu(), reference(q_tensor, k_tensor, v_tensor),
                             atol=1e-5, rtol=1e-3)
  print("fused_self_attn_for_SD_small_head_size (4096, 64): NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())

  # Extra (ours, not in the tutorial's driver): the kernel's causal-mask path (nisa.affine_select)
  output_nki = fused_self_attn_for_SD_small_head_size(
      q_tensor.to("neuron"), k_tensor.to("neuron"), v_tensor.to("neuron"), use_causal_mask=True)
  # Causal rows near the top average few values, so the bf16 rounding of v (the kernel's
  # mixed precision: pe_in_dt is bfloat16) is not averaged away: row 0 is v[0] in bf16.
  torch.testing.assert_close(output_nki.cpu(), reference(q_tensor, k_tensor, v_tensor, True),
                             atol=4e-3, rtol=1e-2)
  print("fused_self_attn_for_SD_small_head_size, use_causal_mask=True: NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())

  # Attention tutorial v1 / v2: d_head = seqlen = 128, values in [-1, 1), float32
  d_head, seqlen = 128, 128
  q = (torch.rand((d_head, seqlen), dtype=torch.float32) - 0.5) * 2
  k = (torch.rand((d_head, seqlen), dtype=torch.float32) - 0.5) * 2
  v = (torch.rand((d_head, seqlen), dtype=torch.float32) - 0.5) * 2
  expected = reference_attn_fwd(q, k, v)
  for version in (attn_fwd_v1, attn_fwd_v2):
    attn_out = version(q.to("neuron"), k.to("neuron"), v.to("neuron"))
    torch.testing.assert_close(attn_out.cpu(), expected, atol=1e-2, rtol=1e-5)
    print(f"{getattr(version, '__name__', version)} (128, 128): NKI and Torch match")
    print(torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
  main()
