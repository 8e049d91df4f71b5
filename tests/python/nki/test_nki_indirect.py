"""Indirect access as AWS's NKI Library writes it: a view whose start is read
at run time from an SBUF tile (`tensor.ap(scalar_offset=/vector_offset=)`,
`tensor.select(d, tile)`, `tensor.vector_select`), gathering and
scattering through DMA, with `oob_mode.skip` dropping what falls outside
the tensor. Each is checked against PyTorch's indexing on `neuron` tensors."""

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import load, store

import torch_neuronx  # noqa: F401


@nki.jit
def rows_at(a, start):
    """128 rows of a (HBM, (n, f)) from row start[0, 0] on: `.ap` with a scalar offset."""
    f = a.shape[1]
    idx = load(start)
    sb = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=a.ap(pattern=[[f, 128], [1, f]], offset=0, scalar_offset=idx, indirect_dim=0))
    return store(sb)


@nki.jit
def batch_at(a, b):
    """a[b[0, 0]] for a of shape (batch, p, f): `select` at a run-time index."""
    idx = load(b)
    view = a.select(0, idx)
    assert view.is_indirect() and tuple(view.shape) == tuple(a.shape[1:])
    sb = nl.ndarray(view.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=view)
    return store(sb)


@nki.jit
def gather_rows(a, offsets):
    """Row offsets[p] of a for each partition p: `vector_select`."""
    idx = load(offsets)
    view = a.vector_select(0, idx)
    sb = nl.ndarray(view.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=view)
    return store(sb)


@nki.jit
def scatter_rows(cache, rows, positions):
    """cache with row p of rows written at row positions[p] (`.ap` with a vector
    offset as the destination); positions past the cache are skipped."""
    n, f = cache.shape
    out = nl.ndarray(cache.shape, dtype=cache.dtype, buffer=nl.shared_hbm)
    whole = nl.ndarray((n, f), dtype=cache.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=whole, src=cache)
    nisa.dma_copy(dst=out, src=whole)
    idx, sb = load(positions), load(rows)
    dst = out.ap(pattern=[[f, rows.shape[0]], [1, f]], offset=0, vector_offset=idx, indirect_dim=0)
    nisa.dma_copy(dst=dst, src=sb, oob_mode=nisa.oob_mode.skip)
    return out


def test_a_scalar_offset_starts_the_access_at_a_run_time_row():
    a = torch.randn(4 * 128, 32)
    for start in (0, 128, 200, 384):
        got = rows_at(a.neuron(), torch.tensor([[start]], dtype=torch.int32).neuron()).cpu()
        assert torch.equal(got, a[start : start + 128])


def test_select_at_a_run_time_index_drops_the_dimension():
    a = torch.randn(4, 16, 8)
    for b in range(4):
        assert torch.equal(batch_at(a.neuron(), torch.tensor([[b]], dtype=torch.int32).neuron()).cpu(), a[b])


def test_vector_select_gathers_a_row_per_partition():
    a = torch.randn(64, 24)
    offsets = torch.randint(0, 64, (32, 1), dtype=torch.int32)
    assert torch.equal(gather_rows(a.neuron(), offsets.neuron()).cpu(), a[offsets.flatten().long()])


def test_a_vector_offset_scatters_rows_and_skips_those_out_of_bounds():
    cache, rows = torch.randn(16, 8), torch.randn(4, 8)
    positions = torch.tensor([[3], [15], [2**31 - 1], [0]], dtype=torch.int32)  # the third is past the cache
    got = scatter_rows(cache.neuron(), rows.neuron(), positions.neuron()).cpu()
    want = cache.clone()
    for p, r in zip(positions.flatten().tolist(), rows):
        if p < 16:
            want[p] = r
    assert torch.equal(got, want)


def test_an_offset_out_of_bounds_is_an_error_naming_it():
    a = torch.randn(2 * 128, 8).neuron()
    with pytest.raises(RuntimeError, match=r"reaches element .*run-time offsets \[129\].*oob_mode"):
        rows_at(a, torch.tensor([[129]], dtype=torch.int32).neuron())


def test_offsets_must_be_written_integers_in_sbuf():
    @nki.jit
    def unwritten(a):
        idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        sb = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=sb, src=a.ap(pattern=[[8, 4], [1, 8]], scalar_offset=idx))
        return store(sb)

    with pytest.raises(nki.NKIError, match="run-time offset is read from never-written elements"):
        unwritten(torch.randn(4, 8).neuron())

    @nki.jit
    def float_offsets(a):
        idx = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=idx, value=0.0)
        return store(load(a.ap(pattern=[[8, 4], [1, 8]], scalar_offset=idx)))

    with pytest.raises(nki.NKIError, match="must hold integers"):
        float_offsets(torch.randn(4, 8).neuron())


@nki.jit
def fused_residual(a, b, c):
    """a + b + c through the DMA engines, as AWS's qkv kernels add residuals."""
    sb = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_compute(dst=sb, srcs=[a, b, c], reduce_op=nl.add, scales=[1.0, 1.0, 1.0])
    return store(sb)


@nki.jit
def scatter_add(table, rows, positions):
    """table with row p of rows added at row positions[p], repeats adding twice (unique_indices=False)."""
    n, f = table.shape
    out = store(load(table))
    idx, sb = load(positions), load(rows)
    at = out.ap(pattern=[[f, rows.shape[0]], [1, f]], offset=0, vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=at, srcs=[at, sb], reduce_op=nl.add, unique_indices=False)
    return out


def test_dma_compute_sums_its_sources_and_scatters_with_repeats():
    a, b, c = (torch.randn(16, 8, dtype=torch.bfloat16) for _ in range(3))
    want = a.float() + b.float() + c.float()
    assert torch.equal(fused_residual(a.neuron(), b.neuron(), c.neuron()).cpu(), want)
    table, rows = torch.randn(8, 4), torch.randn(3, 4)
    positions = torch.tensor([[2], [5], [2]], dtype=torch.int32)
    want = table.clone().index_add_(0, positions.flatten().long(), rows)
    torch.testing.assert_close(scatter_add(table.neuron(), rows.neuron(), positions.neuron()).cpu(), want)
