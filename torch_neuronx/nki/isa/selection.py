"""nki.isa instructions that select by value, predicate or index range, as
AWS's NKI Library's top-k, attention and MoE kernels use them:
`tensor_copy_predicated` (copy where a predicate holds), `nc_find_index8`
(where 8 values first occur), `nc_match_replace8` (replace them),
`range_select` (keep a range of free positions) and `select_reduce`
(choose by predicate), the last two with a row maximum; all on the Vector
engine, in the dst-first style only (they are newer than the returning
style)."""

from __future__ import annotations

import math

import torch

from ..chip import dtypes
from ..errors import NKIUnsupported
from ..trace import state
from ..trace.buffers import PSUM
from ..trace.emit import emit
from ..trace.operands import as_tile, f32, fp32_scalar, is_scalar
from ..trace.tile import Tile
from .calls import REQ, need, split
from .enums import reduce_cmd
from .ops import BINARY, name_of

_PREDICATE_DTYPES = (torch.uint8, torch.uint16, torch.uint32)
_NOT_FOUND = {torch.uint16: 0xFFFF, torch.uint32: 0xFFFFFFFF}


def _same_layout(tr, name, what, t: Tile, ref_name, ref: Tile):
    """AWS: t has ref's partitions and ref's number of elements per partition."""
    if t.shape[0] != ref.shape[0] or math.prod(t.shape[1:]) != math.prod(ref.shape[1:]):
        raise tr.error(
            f"nisa.{name}: {what} {list(t.shape)} must have {ref_name}'s partitions and "
            f"elements per partition, {ref_name} is {list(ref.shape)}"
        )


def tensor_copy_predicated(*args, **kwargs):
    """dst[i] = src[i] where predicate[i] is nonzero (zero with reverse_pred);
    dst[i] keeps its value elsewhere. src may be a tile or a number."""
    d = split(args, kwargs, {"dst": REQ, "src": REQ, "predicate": REQ, "reverse_pred": False})
    need(d, "dst", "src", "predicate")
    tr = state.require("nisa.tensor_copy_predicated")
    dst = as_tile(d["dst"], "tensor_copy_predicated dst")
    predicate = as_tile(d["predicate"], "tensor_copy_predicated predicate")
    src = d["src"]
    if predicate.dtype not in _PREDICATE_DTYPES:
        raise tr.error(
            "nisa.tensor_copy_predicated: predicate must be uint8, uint16 or uint32, "
            f"got {dtypes.of_torch(predicate.dtype)}"
        )
    _same_layout(tr, "tensor_copy_predicated", "predicate", predicate, "dst", dst)
    if isinstance(src, Tile):
        _same_layout(tr, "tensor_copy_predicated", "src", src, "dst", dst)
        if src.access.buffer.kind is PSUM and predicate.access.buffer.kind is PSUM:
            raise tr.error("nisa.tensor_copy_predicated: src and predicate may not both be in PSUM")
    elif not is_scalar(src):
        raise tr.error(f"nisa.tensor_copy_predicated: src must be a tile or a number, got {src!r}")
    reverse = bool(d.get("reverse_pred"))
    shape = tuple(dst.shape)

    def compute(s, p, old):
        take = (p.reshape(shape) != 0) ^ reverse
        value = s.reshape(shape).to(old.dtype) if isinstance(s, torch.Tensor) else torch.tensor(s).to(old.dtype)
        return torch.where(take, value, old)

    return emit(
        "tensor_copy_predicated",
        "vector",
        compute,
        [src, predicate, dst],
        dst=dst,
        keep_src_shapes=True,
        cost={"elements": math.prod(shape)},
    )


def _pair_matches(data: torch.Tensor, vals: torch.Tensor, order) -> torch.Tensor:
    """Per partition, the position in `data` [P, F] matched by each of the 8
    `vals` [P, 8], -1 where none is left: the vals are taken in `order`, each
    pairing with the first occurrence no earlier val took (duplicate vals
    pair with successive occurrences). Only elements between a row's least
    and greatest val can match: when those are few (the vals are a row's top
    8, as max8 gives them), the pairing runs over them alone."""
    cand = (data >= vals.amin(dim=1, keepdim=True)) & (data <= vals.amax(dim=1, keepdim=True))
    counts = cand.sum(dim=1)
    k = int(counts.max()) if counts.numel() else 0
    if k == 0 or 4 * k >= data.shape[1]:
        return _pair_in(data, vals, order)
    rows, cols = cand.nonzero(as_tuple=True)  # by row, then by position: each row's candidates in order
    starts = torch.cumsum(counts, 0) - counts
    slot = torch.arange(rows.numel()) - starts[rows]
    positions = torch.full((data.shape[0], k), -1, dtype=torch.int64)
    positions[rows, slot] = cols
    values = torch.full((data.shape[0], k), float("nan"), dtype=data.dtype)
    values[rows, slot] = data[rows, cols]
    found = _pair_in(values, vals, order)
    return torch.where(found >= 0, torch.gather(positions, 1, found.clamp(min=0)), -1)


def _pair_in(data: torch.Tensor, vals: torch.Tensor, order) -> torch.Tensor:
    taken = torch.zeros_like(data, dtype=torch.bool)
    found = torch.full(vals.shape, -1, dtype=torch.int64)
    rows = torch.arange(data.shape[0])
    for i in order:
        match = (data == vals[:, i : i + 1]) & ~taken
        hit = match.any(dim=1)
        first = match.int().argmax(dim=1)
        found[:, i] = torch.where(hit, first, -1)
        taken[rows[hit], first[hit]] = True
    return found


def _find8_operands(tr, name, d):
    data = as_tile(d["data"], f"{name} data")
    vals = as_tile(d["vals"], f"{name} vals")
    free = math.prod(data.shape[1:])
    if not 8 <= free <= 16384:
        raise tr.error(f"nisa.{name}: data has {free} elements per partition, AWS's limit is 8 to 16,384")
    if math.prod(vals.shape[1:]) != 8 or vals.shape[0] != data.shape[0]:
        raise tr.error(f"nisa.{name}: vals must hold 8 values on each of data's partitions, got {list(vals.shape)}")
    return data, vals


def _flat(a: torch.Tensor) -> torch.Tensor:
    return a.reshape(a.shape[0], -1).float()


def _index_output(tr, name, dst: Tile, data: Tile, vals: Tile, order):
    if dst.dtype not in _NOT_FOUND or math.prod(dst.shape[1:]) != 8:
        raise tr.error(
            f"nisa.{name}: the index tile must be [partitions, 8] of uint16 or uint32, got "
            f"{list(dst.shape)} {dtypes.of_torch(dst.dtype)}"
        )
    missing = _NOT_FOUND[dst.dtype]

    def compute(a, v):
        found = _pair_matches(_flat(a), _flat(v), order)
        return torch.where(found >= 0, found, missing).reshape(dst.shape)

    emit(name, "vector", compute, [data, vals], dst=dst, keep_src_shapes=True, cost={"elements": data.shape[0] * 8})


def nc_find_index8(*args, **kwargs):
    """The index of the first occurrence of each of 8 values in each
    partition of data; all ones (0xFFFFFFFF, 0xFFFF) where a value is absent."""
    d = split(args, kwargs, {"dst": REQ, "data": REQ, "vals": REQ})
    need(d, "dst", "data", "vals")
    tr = state.require("nisa.nc_find_index8")
    data, vals = _find8_operands(tr, "nc_find_index8", d)
    dst = as_tile(d["dst"], "nc_find_index8 dst")
    _index_output(tr, "nc_find_index8", dst, data, vals, range(8))
    return dst


def nc_match_replace8(*args, **kwargs):
    """data with the first occurrence of each of 8 values replaced by imm
    (the values taken from the last to the first, as the engine does), and
    their indices in dst_idx when given."""
    d = split(args, kwargs, {"dst": REQ, "data": REQ, "vals": REQ, "imm": REQ, "dst_idx": None})
    need(d, "dst", "data", "vals", "imm")
    tr = state.require("nisa.nc_match_replace8")
    data, vals = _find8_operands(tr, "nc_match_replace8", d)
    dst = as_tile(d["dst"], "nc_match_replace8 dst")
    if math.prod(dst.shape) != math.prod(data.shape) or dst.shape[0] != data.shape[0]:
        raise tr.error(f"nisa.nc_match_replace8: dst {list(dst.shape)} must hold data's {list(data.shape)}")
    imm = fp32_scalar(d["imm"])
    if d.get("dst_idx") is not None:
        _index_output(
            tr, "nc_match_replace8", as_tile(d["dst_idx"], "nc_match_replace8 dst_idx"), data, vals, range(7, -1, -1)
        )

    def compute(a, v):
        flat = _flat(a).clone()  # _flat may return a's own storage
        found = _pair_matches(flat, _flat(v), range(7, -1, -1))
        rows, cols = torch.nonzero(found >= 0, as_tuple=True)
        flat[rows, found[rows, cols]] = imm
        return flat.reshape(dst.shape)

    emit(
        "nc_match_replace8",
        "vector",
        compute,
        [data, vals],
        dst=dst,
        keep_src_shapes=True,
        cost={"elements": math.prod(data.shape)},
    )
    return dst


_COMPARISONS = ("equal", "less", "less_equal", "greater", "greater_equal")


def _row_max(tr, name, d, result: Tile, rows: int):
    """The Vector engine's max-reduction of `result` along its free axes into
    reduce_res, as reduce_cmd says: reset_reduce (and reset) start afresh;
    reduce, which continues the engine's accumulator from an earlier
    instruction, is not modelled."""
    cmd = d.get("reduce_cmd")
    if cmd in (reduce_cmd.reduce, reduce_cmd.load_reduce):
        raise NKIUnsupported(
            f"nisa.{name}(reduce_cmd={cmd!r}): continuing the Vector engine's accumulator across "
            "instructions is not supported by the NKI emulator yet"
        )
    if d.get("reduce_op") is not None and name_of(d["reduce_op"]) not in ("maximum", "max", "amax"):
        raise tr.error(f"nisa.{name}: reduce_op must be nl.maximum, got {d['reduce_op']!r}")
    res = d.get("reduce_res")
    if res is None or cmd in (reduce_cmd.idle, reduce_cmd.reset):
        return
    res = as_tile(res, f"{name} reduce_res")
    if res.shape[0] != rows or math.prod(res.shape[1:]) != 1:
        raise tr.error(f"nisa.{name}: reduce_res must be [{rows}, 1], got {list(res.shape)}")
    emit(
        f"{name}_reduce",
        "vector",
        lambda a: f32(a).reshape(a.shape[0], -1).amax(dim=1).reshape(res.shape),
        [result],
        dst=res,
        keep_src_shapes=True,
        cost={"elements": rows},  # computed in the same pass as the select
    )


def range_select(*args, **kwargs):
    """on_true_tile where comp_op0(index, bound0) and comp_op1(index, bound1)
    hold, index being range_start + the free position, else on_false_value;
    the row maximum of the result into reduce_res (reduce_cmd)."""
    d = split(
        args,
        kwargs,
        {
            "dst": REQ,
            "on_true_tile": REQ,
            "comp_op0": REQ,
            "comp_op1": REQ,
            "bound0": REQ,
            "bound1": REQ,
            "reduce_cmd": reduce_cmd.reset_reduce,
            "reduce_res": None,
            "reduce_op": None,
            "range_start": 0,
            "on_false_value": -3.4028234663852886e38,
        },
    )
    need(d, "dst", "on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1")
    tr = state.require("nisa.range_select")
    dst, on_true = as_tile(d["dst"], "range_select dst"), as_tile(d["on_true_tile"], "range_select on_true_tile")
    bounds = [as_tile(d[b], f"range_select {b}") for b in ("bound0", "bound1")]
    ops = [name_of(d[c]) for c in ("comp_op0", "comp_op1")]
    for c, op in zip(("comp_op0", "comp_op1"), ops):
        if op not in _COMPARISONS:
            raise tr.error(f"nisa.range_select: {c} must be one of nl.{', nl.'.join(_COMPARISONS)}, got {d[c]!r}")
    rows = on_true.shape[0]
    for b, t in zip(("bound0", "bound1"), bounds):
        if t.shape[0] != rows or math.prod(t.shape[1:]) != 1:
            raise tr.error(f"nisa.range_select: {b} must hold one value per partition ({rows}), got {list(t.shape)}")
    if not on_true.dtype.is_floating_point:
        raise tr.error(f"nisa.range_select: on_true_tile must be a float tile, got {dtypes.of_torch(on_true.dtype)}")
    free = math.prod(on_true.shape[1:])
    start, false_value = int(d["range_start"]), fp32_scalar(d["on_false_value"])
    cmp0, cmp1 = BINARY[ops[0]], BINARY[ops[1]]

    def compute(a, b0, b1):
        index = (start + torch.arange(free, dtype=torch.float32)).reshape(1, free)
        keep = cmp0(index, f32(b0).reshape(rows, 1).float()) & cmp1(index, f32(b1).reshape(rows, 1).float())
        return torch.where(keep, f32(a).reshape(rows, free), false_value).reshape(dst.shape)

    emit(
        "range_select",
        "vector",
        compute,
        [on_true, bounds[0], bounds[1]],
        dst=dst,
        keep_src_shapes=True,
        cost={"elements": rows * free},
    )
    _row_max(tr, "range_select", d, dst, rows)
    return dst


def select_reduce(*args, **kwargs):
    """on_true where predicate is nonzero (zero with reverse_pred), else
    on_false (a number or one value per partition); the row maximum into
    reduce_res (reduce_cmd)."""
    d = split(
        args,
        kwargs,
        {
            "dst": REQ,
            "predicate": REQ,
            "on_true": REQ,
            "on_false": REQ,
            "reduce_res": None,
            "reduce_cmd": reduce_cmd.idle,
            "reduce_op": None,
            "reverse_pred": False,
        },
    )
    need(d, "dst", "predicate", "on_true", "on_false")
    tr = state.require("nisa.select_reduce")
    dst = as_tile(d["dst"], "select_reduce dst")
    predicate, on_true = (
        as_tile(d["predicate"], "select_reduce predicate"),
        as_tile(d["on_true"], "select_reduce on_true"),
    )
    if predicate.dtype.is_floating_point or predicate.dtype in (torch.int32, torch.uint32, torch.int64):
        raise tr.error(
            "nisa.select_reduce: predicate must be int8, uint8, int16 or uint16, "
            f"got {dtypes.of_torch(predicate.dtype)}"
        )
    rows, free = on_true.shape[0], math.prod(on_true.shape[1:])
    for what, t in (("predicate", predicate), ("dst", dst)):
        _same_layout(tr, "select_reduce", what, t, "on_true", on_true)
    on_false = d["on_false"]
    if isinstance(on_false, Tile) and (on_false.shape[0] != rows or math.prod(on_false.shape[1:]) != 1):
        raise tr.error(f"nisa.select_reduce: on_false must be a number or [{rows}, 1], got {list(on_false.shape)}")
    reverse = bool(d.get("reverse_pred"))

    def compute(p, t, f):
        take = (p.reshape(rows, free) != 0) ^ reverse
        other = f32(f).reshape(rows, 1) if isinstance(f, torch.Tensor) else torch.tensor(float(f))
        return torch.where(take, f32(t).reshape(rows, free), other).reshape(dst.shape)

    emit(
        "select_reduce",
        "vector",
        compute,
        [predicate, on_true, on_false],
        dst=dst,
        keep_src_shapes=True,
        cost={"elements": rows * free},
    )
    _row_max(tr, "select_reduce", d, dst, rows)
    return dst
