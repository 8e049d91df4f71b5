"""Fused attention forward as an NKI kernel, after AWS's fused self-attention
tutorial: per (batch, head) and per tile of 128 queries, S = Q K^T on the
Tensor engine into PSUM, the mask (a caller's mask as an additive bias;
else causal, aligned to the end of the keys as a KV cache is, or the key
tail, by affine_select on the tiles that need it), the row max on the Vector
engine, exp(scale * (S - max)) and its row sum in one Scalar-engine
activation, P^T by nc_transpose and O = P V accumulated in PSUM over tiles of
128 keys, then O / rowsum stored in Transformers' (batch, seq, heads, head_dim)
layout. Grouped-query attention reads key/value head
h // (heads / kv_heads), loaded once for its query heads. head_dim <= 128."""

import math

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

NEG = -3.4028234663852886e38  # fp32 min, as neuronx-cc masks


def tile_sizes(sq, sk):
    """(query tile, query tiles, key tiles): what a bias must be padded to."""
    qt = min(128, sq)
    return qt, math.ceil(sq / qt), math.ceil(sk / 128)


@nki.jit
def attention_kernel(q, k, v, bias, scale, causal):
    """q: (B, H, Sq, D); k, v: (B, Hkv, Sk, D); bias None or fp32 (1 or B,
    1 or H, n_q * qt, n_k * 128) added to Q K^T before the scale (padded:
    large negative in the key padding). Returns (B, Sq, H, D)."""
    B, H, Sq, D = q.shape
    Hkv, Sk = k.shape[1], k.shape[2]
    assert D <= 128, f"head_dim {D} > 128: the contraction of Q K^T must fit the 128 partitions"
    out = nl.ndarray((B, Sq, H, D), dtype=q.dtype, buffer=nl.shared_hbm)
    rep = H // Hkv
    qt, n_q, n_k = tile_sizes(Sq, Sk)
    past = Sk - Sq  # causal: query i sees keys <= i + past
    ip = nl.arange(128)[:, None]
    iq = nl.arange(qt)[None, :]
    ik = nl.arange(128)[None, :]
    idd = nl.arange(D)[None, :]
    ipd = nl.arange(D)[:, None]
    # Work items (head, query tile) in groups whose scores fit SBUF; in each
    # group the stages run item after item (all Q K^T, then all softmaxes,
    # then all P V), so each engine's in-order queue has independent work
    # from the next item while one item's softmax waits: the software
    # pipelining the compiler would do. static_range: unrolled, so the
    # per-item tiles can live in Python lists.
    group = max(1, min(H * n_q, (96 * 1024) // (n_k * 128 * 6)))
    items = [(h, i) for h in range(H) for i in range(n_q)]
    iqp = nl.arange(qt)[:, None]
    for b in nl.static_range(B):
        k_t, v_s = [], []
        for hk in nl.static_range(Hkv):  # each key/value head loads once for its query heads
            kt_h = nl.zeros((n_k, nl.par_dim(D), 128), dtype=q.dtype)  # K^T: head_dim on partitions
            vs_h = nl.zeros((n_k, nl.par_dim(128), D), dtype=q.dtype)  # V: keys on partitions
            for j in nl.affine_range(n_k):
                vs_h[j, ip, idd] = nl.load(v[b, hk, j * 128 + ip, idd], mask=(j * 128 + ip < Sk))
                kt_h[j, ipd, ik] = nl.load_transpose2d(
                    k[b, hk, j * 128 + nl.arange(128)[:, None], idd], mask=(j * 128 + ik < Sk)
                )
            k_t.append(kt_h)
            v_s.append(vs_h)
        for g in nl.static_range(0, len(items), group):
            work = items[g : g + group]
            scores = []
            for h, i in work:  # stage 1: S = Q K^T, masked where needed
                q_t = nl.load_transpose2d(q[b, h, i * qt + nl.arange(qt)[:, None], idd], mask=(i * qt + iq < Sq))
                s_sb = nl.ndarray((nl.par_dim(qt), n_k * 128), dtype=nl.float32)
                for j in nl.static_range(n_k):  # static: the masking below depends on j at trace time
                    s_psum = nisa.nc_matmul(q_t, k_t[h // rep][j, ipd, ik])
                    if bias is not None:  # the caller's mask, as an additive bias
                        b_tile = nl.load(
                            bias[
                                b if bias.shape[0] > 1 else 0, h if bias.shape[1] > 1 else 0, i * qt + iqp, j * 128 + ik
                            ]
                        )
                        s_sb[iqp, j * 128 + ik] = nl.add(s_psum, b_tile, dtype=nl.float32)
                        continue
                    if causal and j * 128 + 127 > i * qt + past:  # the tile reaches past the diagonal
                        keep = i * qt + past + iqp >= j * 128 + ik
                    elif not causal and (j + 1) * 128 > Sk:  # the key tail
                        keep = j * 128 + ik + 0 * iqp < Sk
                    else:
                        s_sb[iqp, j * 128 + ik] = nl.copy(s_psum, dtype=nl.float32)
                        continue
                    s_sb[iqp, j * 128 + ik] = nisa.affine_select(
                        pred=keep, on_true_tile=s_psum, on_false_value=NEG, dtype=nl.float32
                    )
                scores.append(s_sb)
            probs = []
            for s_sb in scores:  # stage 2: exp(scale * s - scale * max) and its row sum, one activation
                neg_max = nisa.tensor_reduce(np.max, data=s_sb, axis=(1,), negate=True, dtype=nl.float32)
                row_sum = nl.ndarray((nl.par_dim(qt), 1), dtype=nl.float32)
                p_in = nisa.activation_reduce(
                    op=np.exp,
                    data=s_sb,
                    reduce_op=np.add,
                    reduce_res=row_sum,
                    bias=nl.multiply(neg_max, scale),
                    scale=scale,
                    dtype=v.dtype,
                )
                probs.append((p_in, row_sum))
            for (h, i), (p_in, row_sum) in zip(work, probs):  # stage 3: O = P V / row sum
                o_psum = nl.zeros((nl.par_dim(qt), D), dtype=nl.float32, buffer=nl.psum)
                for j in nl.affine_range(n_k):
                    # PSUM -> SBUF on the Scalar engine: the Vector engine is the busier one
                    p_t = nisa.tensor_copy(
                        nisa.nc_transpose(p_in[iqp, j * 128 + ik]), engine=nisa.scalar_engine, dtype=v.dtype
                    )
                    o_psum += nisa.nc_matmul(p_t, v_s[h // rep][j, ip, idd])
                o = nl.multiply(o_psum, nl.reciprocal(row_sum), dtype=q.dtype)
                nl.store(out[b, i * qt + iqp, h, idd], value=o, mask=(i * qt + iqp < Sq))
    return out
