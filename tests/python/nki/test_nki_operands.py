"""How the engines pair an instruction's operands, as AWS's NKI Library
relies on: element by element in each partition's order (a [P, A, B] view
beside a [P, A * B] destination), broadcast views as sources (their elements
read several times, by the kernel and by the cost model), and a destination
that overlaps a source computes from the values read before the write.
Each is checked against PyTorch on `neuron` tensors."""

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import load, store

import torch_neuronx  # noqa: F401


@nki.jit
def minus_row_max(scores, row_max):
    """scores [P, A * B] minus row_max [P, B] broadcast over A, through a [P, A, B] view."""
    s, m = load(scores), load(row_max)
    a = scores.shape[1] // row_max.shape[1]
    nisa.tensor_tensor(s, s, m.expand_dim(1).broadcast(1, a), op=nl.subtract)
    return store(s)


def test_a_broadcast_view_pairs_with_a_flat_destination_element_by_element():
    scores, row_max = torch.randn(128, 40), torch.randn(128, 5)
    got = minus_row_max(scores.neuron(), row_max.neuron()).cpu()
    want = (scores.reshape(128, 8, 5) - row_max[:, None, :]).reshape(128, 40)
    assert torch.equal(got, want)
    assert nki.last_estimate().total_us > 0


@nki.jit
def shifted_sum(x):
    """t[:, 0:8] = t[:, 4:12] + t[:, 4:12]: the destination overlaps the sources."""
    t = load(x)
    nisa.tensor_tensor(dst=t[:, 0:8], data1=t[:, 4:12], data2=t[:, 4:12], op=nl.add)
    nisa.tensor_copy(dst=t[:, 9:16], src=t[:, 8:15])
    return store(t)


def test_a_destination_overlapping_its_sources_computes_from_what_they_held():
    x = torch.randn(16, 16)
    want = x.clone()
    want[:, 0:8] = x[:, 4:12] + x[:, 4:12]
    want[:, 9:16] = want[:, 8:15].clone()
    assert torch.equal(shifted_sum(x.neuron()).cpu(), want)


@nki.jit
def transposed_through_the_pe_array(x):
    """nc_matmul(is_transpose=True) with an identity moving tile, as AWS's cascaded_max transposes."""
    t = load(x)
    ident = nl.shared_identity_matrix(x.shape[0], dtype=nl.float32)
    i_sb = nl.ndarray((x.shape[0], x.shape[0]), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i_sb, src=ident)
    p = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p[...], stationary=t, moving=i_sb, is_transpose=True)
    out = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out, src=p)
    return store(out)


def test_nc_matmul_in_transpose_mode():
    x = torch.randn(64, 32)
    assert torch.equal(transposed_through_the_pe_array(x.neuron()).cpu(), x.T)


@nki.jit
def matmuls_over_several_free_dims(a, b):
    """[K, 2, M] stationary and [K, 2, N] moving: free dimensions in order
    ([2 M, 2 N] result), or in FP8 double-row mode contracting the pair too."""
    k, _, m = a.shape
    n = b.shape[2]
    sa = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sa, src=a)
    sb = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=b)
    flat = nl.ndarray((2 * m, 2, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(flat, sa, sb)
    pair = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(pair, sa, sb, perf_mode=nisa.matmul_perf_mode.double_row)
    out1, out2 = (
        nl.ndarray((2 * m, 2 * n), dtype=nl.float32, buffer=nl.sbuf),
        nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf),
    )
    nisa.tensor_copy(dst=out1, src=flat)
    nisa.tensor_copy(dst=out2, src=pair)
    return store(out1), store(out2)


def test_matmul_operands_with_several_free_dimensions_and_double_row():
    a, b = torch.randn(32, 2, 8), torch.randn(32, 2, 16)
    flat, pair = (t.cpu() for t in matmuls_over_several_free_dims(a.neuron(), b.neuron()))
    tol = {"rtol": 64 * 2**-24, "atol": 1e-5}
    torch.testing.assert_close(flat, a.reshape(32, 16).T @ b.reshape(32, 32), **tol)
    torch.testing.assert_close(pair, a[:, 0].T @ b[:, 0] + a[:, 1].T @ b[:, 1], **tol)


@nki.jit
def dma_transposed_4d(x):
    """A 4-d DMA transpose with AWS's default permutation (3, 1, 2, 0)."""
    out = nl.ndarray((x.shape[3], x.shape[1], x.shape[2], x.shape[0]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=out, src=x)
    res = nl.ndarray(out.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=res, src=out)
    return res


def test_dma_transpose_of_four_dimensions_swaps_the_first_and_last():
    x = torch.randn(8, 1, 3, 16)
    assert torch.equal(dma_transposed_4d(x.neuron()).cpu(), x.permute(3, 1, 2, 0))


@nki.jit(platform_target="trn3")
def exp_with_row_sums(x, row_max):
    t, m = load(x), load(row_max)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    sums = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.exponential(dst=out, src=t, max_value=m, reduce_res=sums, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return store(out), store(sums)


def test_exponential_on_trn3_and_refused_on_trn2():
    x = torch.randn(16, 32)
    row_max = x.amax(dim=1, keepdim=True)
    out, sums = (t.cpu() for t in exp_with_row_sums(x.neuron(), row_max.neuron()))
    torch.testing.assert_close(out, torch.exp(x - row_max))
    torch.testing.assert_close(sums, torch.exp(x - row_max).sum(dim=1, keepdim=True))

    @nki.jit
    def on_trn2(x):
        t = load(x)
        nisa.exponential(dst=t, src=t)
        return store(t)

    with pytest.raises(nki.NKIError, match="available only on NeuronCore-v4"):
        on_trn2(x.neuron())


@nki.jit
def sum_of_squares_into_a_discarded_view(x):
    """activation_reduce with its dst a zero-step view of a [P, 1] tile, as AWS's
    qkv_cte discards the activation and keeps only the reduction."""
    t = load(x)
    p, f = x.shape
    act = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    sums = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(
        dst=act.ap(pattern=[[1, p], [0, f]]), op=nl.square, data=t, reduce_op=nl.add, reduce_res=sums
    )
    scaled = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    row_max = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(
        dst=scaled.ap(pattern=[[f, p], [0, f]]),
        data=t,
        op0=nl.multiply,
        operand0=2.0,
        reduce_op=nl.maximum,
        reduce_res=row_max,
    )
    return store(sums), store(row_max)


def test_a_reduction_is_of_the_results_not_of_a_discarded_destination():
    x = torch.randn(32, 48)
    sums, row_max = (t.cpu() for t in sum_of_squares_into_a_discarded_view(x.neuron()))
    torch.testing.assert_close(sums, (x * x).sum(dim=1, keepdim=True))
    assert torch.equal(row_max, (x * 2).amax(dim=1, keepdim=True))
