"""The selecting instructions AWS's NKI Library uses (top-k, attention
masks, MoE routing): nisa.tensor_copy_predicated, nc_find_index8,
nc_match_replace8 and tensor_partition_reduce, against the same selection
in PyTorch on `neuron` tensors, and their refusals."""

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import load as _load
from helpers.nki_tiles import store as _store

import torch_neuronx  # noqa: F401


@nki.jit
def copy_where(dst, src, predicate, reverse_pred=False):
    d = _load(dst)
    s = _load(src) if not isinstance(src, float) else src
    nisa.tensor_copy_predicated(dst=d, src=s, predicate=_load(predicate), reverse_pred=reverse_pred)
    return _store(d)


@pytest.mark.parametrize("reverse", [False, True])
def test_tensor_copy_predicated_copies_where_the_predicate_holds(reverse):
    torch.manual_seed(0)
    dst, src = torch.randn(128, 64), torch.randn(128, 64)
    predicate = torch.randint(0, 3, (128, 64), dtype=torch.uint8)  # any nonzero value is true
    got = copy_where(dst.neuron(), src.neuron(), predicate.neuron(), reverse_pred=reverse).cpu()
    take = (predicate != 0) ^ reverse
    assert torch.equal(got, torch.where(take, src, dst))
    got = copy_where(dst.neuron(), -7.5, predicate.neuron()).cpu()  # a number as src
    assert torch.equal(got, torch.where(predicate != 0, torch.tensor(-7.5), dst))


def test_tensor_copy_predicated_refuses_a_float_predicate():
    x = torch.zeros(4, 8).neuron()
    with pytest.raises(nki.NKIError, match="predicate must be uint8, uint16 or uint32, got float32"):
        copy_where(x, x, x)


@nki.jit
def find_and_replace(data, imm):
    d = _load(data)
    top = nl.ndarray((data.shape[0], 8), dtype=data.dtype, buffer=nl.sbuf)
    nisa.max8(dst=top, src=d)
    found = nl.ndarray((data.shape[0], 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=found, data=d, vals=top)
    replaced = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.sbuf)
    matched = nl.ndarray((data.shape[0], 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.nc_match_replace8(dst=replaced, data=d, vals=top, imm=imm, dst_idx=matched)
    return _store(top), _store(found), _store(replaced), _store(matched)


def test_top8_indices_and_replacement_match_torch_topk():
    torch.manual_seed(0)
    data = torch.randn(64, 200)  # distinct values
    top, found, replaced, matched = (t.cpu() for t in find_and_replace(data.neuron(), -1e9))
    ref = torch.topk(data, 8, dim=1)
    assert torch.equal(top, ref.values)
    assert torch.equal(found.long(), ref.indices)
    assert torch.equal(matched.long(), ref.indices)
    expected = data.clone()
    expected.scatter_(1, ref.indices, -1e9)
    assert torch.equal(replaced, expected)


def test_duplicate_values_pair_with_successive_occurrences_in_opposite_orders():
    # AWS's example: data [1, 2, 3, 4, 8 x 7], vals [3, 8 x 7]: find_index8 pairs the duplicate
    # vals with the matches in ascending order, match_replace8 in descending order
    data = torch.tensor([[1.0, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]])

    @nki.jit
    def both(data, vals):
        d, v = _load(data), _load(vals)
        found = nl.ndarray((1, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=found, data=d, vals=v)
        replaced = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.sbuf)
        matched = nl.ndarray((1, 8), dtype=nl.uint16, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=replaced, data=d, vals=v, imm=0.0, dst_idx=matched)
        return _store(found), _store(matched), _store(replaced)

    vals = torch.tensor([[3.0] + [8.0] * 7])
    found, matched, replaced = (t.cpu() for t in both(data.neuron(), vals.neuron()))
    assert found.long().tolist() == [[2, 4, 5, 6, 7, 8, 9, 10]]
    assert matched.long().tolist() == [[2, 10, 9, 8, 7, 6, 5, 4]]
    assert replaced.tolist() == [[1.0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0]]
    absent = torch.tensor([[5.0] * 8])
    found, matched, _ = (t.cpu() for t in both(data.neuron(), absent.neuron()))
    assert found.long().tolist() == [[0xFFFFFFFF] * 8] and matched.long().tolist() == [[0xFFFF] * 8]


@pytest.mark.parametrize("op", [nl.add, nl.maximum, nl.bitwise_or])
def test_tensor_partition_reduce_reduces_across_partitions(op):
    torch.manual_seed(0)
    integer = op is nl.bitwise_or
    x = torch.randint(0, 1 << 12, (96, 40), dtype=torch.int32) if integer else torch.randn(96, 40)

    @nki.jit
    def reduce_partitions(x):
        r = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_partition_reduce(dst=r, op=op, data=_load(x))
        return _store(r)

    got = reduce_partitions(x.neuron()).cpu()
    if integer:
        expected = x[0:1]
        for row in x[1:]:
            expected = expected | row
        assert torch.equal(got, expected)
    elif op is nl.add:
        torch.testing.assert_close(got, x.sum(dim=0, keepdim=True))
    else:
        assert torch.equal(got, x.amax(dim=0, keepdim=True))


@nki.jit
def causal_rows(scores, lower, upper, start, false_value):
    s = _load(scores)
    out = nl.ndarray(scores.shape, dtype=nl.float32, buffer=nl.sbuf)
    row_max = nl.ndarray((scores.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(
        dst=out,
        on_true_tile=s,
        comp_op0=nl.greater_equal,
        comp_op1=nl.less,
        bound0=_load(lower),
        bound1=_load(upper),
        reduce_res=row_max,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
        range_start=start,
        on_false_value=false_value,
    )
    return _store(out), _store(row_max)


# AWS's kernels also write fp32's lowest as the double -3.4028235e38, just past it: fp32 rounds it to the lowest
@pytest.mark.parametrize("false_value", [nl.fp32.min, -3.4028235e38])
def test_range_select_keeps_each_rows_index_range_and_its_maximum(false_value):
    torch.manual_seed(0)
    scores = torch.randn(128, 96)
    lower = torch.randint(0, 40, (128, 1)).float()
    upper = lower + torch.randint(1, 60, (128, 1)).float()
    out, row_max = (t.cpu() for t in causal_rows(scores.neuron(), lower.neuron(), upper.neuron(), 10, false_value))
    index = 10 + torch.arange(96).float()
    keep = (index >= lower) & (index < upper)
    expected = torch.where(keep, scores, torch.tensor(nl.fp32.min))
    assert torch.equal(out, expected)
    assert torch.equal(row_max, expected.amax(dim=1, keepdim=True))


def test_select_reduce_and_the_accumulator_it_cannot_continue():
    torch.manual_seed(0)
    on_true, fill = torch.randn(64, 32), torch.randn(64, 1)
    predicate = torch.randint(0, 2, (64, 32), dtype=torch.uint8)

    @nki.jit
    def select(predicate, on_true, fill, cmd):
        out = nl.ndarray(on_true.shape, dtype=nl.float32, buffer=nl.sbuf)
        row_max = nl.ndarray((on_true.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(
            dst=out,
            predicate=_load(predicate),
            on_true=_load(on_true),
            on_false=_load(fill),
            reduce_res=row_max,
            reduce_cmd=cmd,
            reduce_op=nl.maximum,
        )
        return _store(out), _store(row_max)

    out, row_max = (
        t.cpu() for t in select(predicate.neuron(), on_true.neuron(), fill.neuron(), nisa.reduce_cmd.reset_reduce)
    )
    expected = torch.where(predicate != 0, on_true, fill)
    assert torch.equal(out, expected) and torch.equal(row_max, expected.amax(dim=1, keepdim=True))
    with pytest.raises(nki.NKIUnsupported, match="continuing the Vector engine's accumulator"):
        select(predicate.neuron(), on_true.neuron(), fill.neuron(), nisa.reduce_cmd.reduce)


@nki.jit
def gather_in_partitions(data, indices):
    d, i = _load(data), _load(indices)
    out = nl.ndarray(indices.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.nc_n_gather(dst=out, data=d, indices=i)
    return _store(out)


@nki.jit
def nonzero_positions(x):
    src = _load(x)
    out = nl.ndarray((x.shape[0], x.shape[1] + 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=out, value=7)
    nisa.nonzero_with_count(dst=out, src=src, index_offset=100, padding_val=-1)
    return _store(out)


def test_nc_n_gather_and_nonzero_with_count_match_torch():
    data = torch.randn(32, 4, 8)
    indices = torch.randint(0, 32, (32, 10), dtype=torch.int32)
    want = torch.gather(data.reshape(32, 32), 1, indices.long())
    assert torch.equal(gather_in_partitions(data.neuron(), indices.neuron()).cpu(), want)
    x = (torch.rand(32, 12) > 0.6).float() * torch.randn(32, 12)
    got = nonzero_positions(x.neuron()).cpu()
    for p in range(32):
        if p % 16:  # GpSimd writes partitions 0 and 16 only (one per core); the rest keep their values
            assert torch.equal(got[p], torch.full((13,), 7, dtype=torch.int32))
            continue
        nz = torch.nonzero(x[p]).flatten().to(torch.int32)
        want = torch.full((13,), -1, dtype=torch.int32)
        want[: len(nz)] = nz + 100
        want[12] = len(nz)
        assert torch.equal(got[p], want)


@nki.jit
def scaled_with_row_max(x):
    t = _load(x)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    row_max = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=out, data=t, op0=nl.multiply, operand0=0.5, reduce_op=nl.maximum, reduce_res=row_max)
    return _store(out), _store(row_max)


def test_tensor_scalar_reduce_scales_and_reduces_each_partition():
    x = torch.randn(64, 40)
    out, row_max = (t.cpu() for t in scaled_with_row_max(x.neuron()))
    assert torch.equal(out, x * 0.5) and torch.equal(row_max, (x * 0.5).amax(dim=1, keepdim=True))


@nki.jit
def gather_within_cores(src, index, n, valid):
    s, i = _load(src), _load(index)
    out = nl.ndarray((src.shape[0], valid * n), dtype=src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=out, src_buffer=s, index=i, num_elem_per_idx=n, num_valid_indices=valid)
    return _store(out)


def test_local_gather_reads_each_cores_indices_partition_first():
    src = torch.randn(32, 64, 4)
    index = torch.randint(0, 64, (32, 3), dtype=torch.int32) * 4  # element offsets, as the hardware takes them
    got = gather_within_cores(src.neuron(), index.neuron(), 4, 40).cpu()
    for core in range(2):
        rows = slice(16 * core, 16 * core + 16)
        order = index[rows].T.reshape(-1)[:40] // 4  # partition first: column by column
        want = src[rows][:, order.long(), :].reshape(16, 160)
        assert torch.equal(got[rows], want)
