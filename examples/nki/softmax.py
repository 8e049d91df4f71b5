# Row softmax kernel (legacy `neuronxcc.nki` style: nl.load/nl.store with `mask=`,
# nl.max(keepdims=True), nl.subtract, nl.exp, nl.sum, `/` between a tile and its row sums).
#
# Source: aws-neuron/nki-samples src/nki_samples/tutorials/softmax/softmax_nki_kernels.py,
#   as added in commit 3c5d277 (2025-04-09) and unchanged on main until its removal in
#   8dc2ee1 / 6905a68 (Feb 2026, "Remove tutorial kernels that do not have corresponding
#   documentation pages"); text taken from 6dc4cb2, the parent of 8dc2ee1.
#   It was contributed to AWS's repository by a community member (PR #55, "feat: add
#   softmax examples", Josh Longenecker) and has no AWS tutorial page; AWS's docs have no
#   standalone softmax tutorial (softmax appears inside the attention kernels, see
#     attention.py).
# License: MIT-0 ("MIT No Attribution", LICENSE of aws-neuron/nki-samples).
# Changes: import lines only (`import torch_xla.core.xla_model as xm`, unused by the kernel,
# is commented out; `import torch_neuronx` added). The original file has no __main__.
# Sample sizes (softmax_torch.py): logits = [[1,2,3,4,5],[5,4,3,2,1]] float32, compared with a
# naive exp/sum softmax, torch.allclose(rtol=1e-5, atol=1e-5). main() also runs one larger
# input of ours, (300, 1000) float32, to exercise the masked last row tile.
import math
import torch_neuronx  # noqa: F401  (ours) makes the `nki` emulator package importable
import nki  # original: import neuronxcc.nki as nki
import nki.language as nl  # original: import neuronxcc.nki.language as nl
# original: import torch_xla.core.xla_model as xm  (unused by the kernel)

@nki.jit
def nki_softmax_kernel(a_tensor):
  # Calculate out_tensor
  # Where softmax(x) = = exp(x - max(x)) / sum(exp(x - max(x)))
  out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype,
                          buffer=nl.shared_hbm)

  # Generate tensor indices to index input tensor
  ix = nl.arange(128)[:, None]
  iy = nl.arange(a_tensor.shape[1])[None, :]

  num_rows = a_tensor.shape[0]

  # Process 128 rows at a time due to 128-partition tile size limitation
  # Since we're not reducing across the first dimension
  # Tiles can be processed independently
  for i in nl.affine_range(math.ceil(a_tensor.shape[0]/128)):

    # Load input data from external memory to on-chip memory
    a_tile = nl.load(a_tensor[i * 128 + ix, iy],
                    mask=(i * 128 + ix < num_rows))

    # Find max and subtract from each value to ensure numerical stability
    max_vals = nl.max(a_tile, axis=[1], keepdims=True, mask=(i * 128 + ix < num_rows))
    shifted = nl.subtract(a_tile, max_vals, mask=(i * 128 + ix < num_rows))

    # Compute element-wise exp of a_tensor
    numerator = nl.exp(shifted)

    # Calculate sum of squared elements, along last dimension
    denominator = nl.sum(numerator, axis=[1])

    # Scale and get a reciprocal
    sm = numerator / denominator

    # store the results back to external memory (out_tensor)
    nl.store(out_tensor[i * 128 + ix, iy], value=sm,
            mask=(i * 128 + ix < num_rows))

  return out_tensor


# ---------------------------------------------------------------------------
# Test driver (ours, not AWS code), after softmax_torch.py.
# ---------------------------------------------------------------------------

def reference(a_tensor):
  # softmax_torch.py's NaiveSoftmax: exp(x) / sum(exp(x), dim=-1, keepdim=True)
  import torch
  numerator = torch.exp(a_tensor)
  denominator = torch.sum(numerator, dim=-1, keepdim=True)
  return numerator / denominator


def main():
  import torch
  import torch_neuronx

  logits = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
  sm_nki = nki_softmax_kernel(logits.to("neuron"))
  torch.testing.assert_close(sm_nki.cpu(), reference(logits), rtol=1e-5, atol=1e-5)
  print("nki_softmax_kernel (2, 5): NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())

  # Extra size (ours, not from the sample): 300 rows -> 3 row tiles, the last one masked.
  torch.manual_seed(0)
  x = torch.randn(300, 1000, dtype=torch.float32)
  sm_nki = nki_softmax_kernel(x.to("neuron"))
  torch.testing.assert_close(sm_nki.cpu(), torch.softmax(x, dim=-1), rtol=1e-4, atol=1e-6)
  print("nki_softmax_kernel (300, 1000): NKI and Torch match")
  print(torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
  main()
