"""Single-head scaled dot-product attention, softmax(q k^T / sqrt(d)) v,
optionally causal, for q, k, v of shape [S, d] (S a multiple of 128, d at
most 128, the row of scores in SBUF: S up to a few thousand).

- q and k are transposed tile by tile on the Tensor engine
  (`nc_transpose`) so that d, the contraction, lies on the partitions.
- Per tile of 128 queries, `nc_matmul` writes the scores in blocks of 512
  keys to PSUM; the Scalar engine scales them into SBUF. With `causal`, only
  the keys up to the tile's last query are computed, and `affine_select`
  sets the scores of later keys on the diagonal block to the lowest fp32.
- Softmax as in softmax.py: the negated row maximum is the bias of one
  `activation_reduce` that exponentiates and sums.
- Each 128-key block of probabilities is transposed and multiplied with
  its rows of v, accumulating the [128, d] output in PSUM; the Vector engine
  divides by the row sums on the way out.

Matmul operands keep the inputs' dtype (bf16 inputs make bf16 matmuls);
scores, sums and accumulation are fp32.

    python -m examples.nki.attention
"""

import math

import nki
import nki.isa as nisa
import nki.language as nl
import torch

import torch_neuronx

P = nl.tile_size.pmax  # 128 queries or keys per tile
KEYS = nl.tile_size.gemm_moving_fmax  # 512 keys per score matmul


def _transposed(x, dtype):
    """x [S, d] in HBM as a [d, S] SBUF tile, by 128-row Tensor-engine transposes."""
    S, d = x.shape
    xT = nl.ndarray((d, S), dtype=dtype, buffer=nl.sbuf)
    for t in nl.affine_range(S // P):
        rows = nl.ndarray((P, d), dtype=dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=rows, src=x[t * P : (t + 1) * P, :])
        flipped = nl.ndarray((d, P), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=flipped, data=rows)
        nisa.tensor_copy(dst=xT[:, t * P : (t + 1) * P], src=flipped)
    return xT


@nki.jit
def attention(q, k, v, causal=False):
    S, d = q.shape
    assert k.shape == q.shape and v.shape == q.shape, (
        f"q, k, v must share one shape, got {q.shape}, {k.shape}, {v.shape}"
    )
    assert S % P == 0 and d <= P, f"S = {S} must be a multiple of {P} and d = {d} at most {P}"
    dtype = q.dtype
    out = nl.ndarray((S, d), dtype=dtype, buffer=nl.shared_hbm)
    qT, kT = _transposed(q, dtype), _transposed(k, dtype)
    values = nl.ndarray((P, S // P, d), dtype=dtype, buffer=nl.sbuf)  # key block j at [:, j, :]
    for j in nl.affine_range(S // P):
        nisa.dma_copy(dst=values[:, j, :], src=v[j * P : (j + 1) * P, :])

    for i in nl.affine_range(S // P):
        n_keys = (i + 1) * P if causal else S
        scores = nl.ndarray((P, n_keys), dtype=nl.float32, buffer=nl.sbuf)
        for k0 in range(0, n_keys, KEYS):
            w = min(KEYS, n_keys - k0)
            block = nl.ndarray((P, w), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=block, stationary=qT[:, i * P : (i + 1) * P], moving=kT[:, k0 : k0 + w])
            nisa.activation(dst=scores[:, k0 : k0 + w], op=nl.copy, data=block, scale=1.0 / math.sqrt(d))
        if causal:  # key i*P + c is visible to query i*P + p when p - c >= 0
            diagonal = scores[:, i * P : (i + 1) * P]
            nisa.affine_select(
                dst=diagonal,
                pattern=[[-1, P]],
                channel_multiplier=1,
                offset=0,
                on_true_tile=diagonal,
                on_false_value=nl.fp32.min,
                cmp_op=nl.greater_equal,
            )

        neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=scores, axis=1, negate=True)
        probs = nl.ndarray((P, n_keys), dtype=dtype, buffer=nl.sbuf)
        total = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=probs, op=nl.exp, data=scores, bias=neg_max, reduce_op=nl.add, reduce_res=total)

        acc = nl.ndarray((P, d), dtype=nl.float32, buffer=nl.psum)
        for j in range(n_keys // P):
            flipped = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=flipped, data=probs[:, j * P : (j + 1) * P])
            probsT = nl.ndarray((P, P), dtype=dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=probsT, src=flipped)
            nisa.nc_matmul(dst=acc, stationary=probsT, moving=values[:, j, :], accumulate=j > 0)
        inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        result = nl.ndarray((P, d), dtype=dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=result, data=acc, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[i * P : (i + 1) * P, :], src=result)
    return out


def reference(q, k, v, causal=False):
    return torch.nn.functional.scaled_dot_product_attention(
        q.float()[None], k.float()[None], v.float()[None], is_causal=causal
    )[0].to(q.dtype)


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(1024, 64) for _ in range(3))
    for causal in (False, True):
        out = attention(q.to("neuron"), k.to("neuron"), v.to("neuron"), causal=causal)
        torch.testing.assert_close(out.cpu(), reference(q, k, v, causal), rtol=1e-4, atol=1e-5)
        print(f"attention (causal={causal}): matches PyTorch;", torch_neuronx.nki.last_estimate())


if __name__ == "__main__":
    main()
