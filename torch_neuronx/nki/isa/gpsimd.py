"""nki.isa GpSimd instructions: `iota` (index values), `affine_select`
(a select on an index predicate), both call styles (see calls.py),
`tensor_partition_reduce` (a reduction across partitions), and those that
move elements by value: `nc_n_gather` (at indices read from a tile, each
partition on its own), `local_gather` (within each GpSimd core's 16
partitions) and `nonzero_with_count` (the positions of the nonzero
elements and their count)."""

from __future__ import annotations

import math

import torch

from ..chip import dtypes
from ..errors import NKIError
from ..trace import state
from ..trace.buffers import SBUF
from ..trace.emit import emit
from ..trace.indexing import IndexExpr
from ..trace.operands import as_tile, f32, fp32_scalar
from ..trace.tile import Tile
from .calls import REQ, need, split
from .ops import BINARY, binary_fn, name_of


def iota(*args, **kwargs):
    """Writes index values: legacy iota(expr, dtype) with an nl.arange expression;
    new iota(dst, pattern, offset=0, channel_multiplier=0)."""
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = split(args, kwargs, {"dst": REQ, "pattern": REQ, "offset": 0, "channel_multiplier": 0})
        dst = as_tile(d["dst"])
        p = dst.shape[0]
        values = (
            torch.full((p,), int(d["offset"]), dtype=torch.int64)[:, None]
            + int(d["channel_multiplier"]) * torch.arange(p)[:, None]
        )
        free = torch.zeros((1,), dtype=torch.int64)
        for step, num in d["pattern"]:
            free = (free[..., None] + int(step) * torch.arange(int(num))).reshape(-1)
        values = (values + free[None, :]).reshape(dst.shape)
        const = values
        return emit(
            "iota",
            "gpsimd",
            lambda: const,
            [],
            dst=dst,
            make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, const),
        )
    d = split(args, kwargs, {"expr": REQ, "dtype": REQ, "mask": None})
    expr = d["expr"]
    if not isinstance(expr, IndexExpr):
        raise NKIError("nisa.iota(expr, dtype): expr must be an expression of nl.arange, e.g. nl.arange(128)[:, None]")
    const = expr.t
    return emit(
        "iota",
        "gpsimd",
        None,
        [],
        shape=tuple(const.shape),
        dtype=dtypes.to_torch(d["dtype"]),
        mask=d.get("mask"),
        make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, const),
    )


def affine_select(*args, **kwargs):
    """on_true where an index predicate holds, else on_false_value."""
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = split(
            args,
            kwargs,
            {
                "dst": REQ,
                "pattern": REQ,
                "channel_multiplier": REQ,
                "on_true_tile": REQ,
                "on_false_value": REQ,
                "cmp_op": None,
                "offset": 0,
            },
        )
        dst = as_tile(d["dst"])
        p = dst.shape[0]
        values = int(d["offset"]) + int(d["channel_multiplier"]) * torch.arange(p)[:, None]
        free = torch.zeros((1,), dtype=torch.int64)
        for step, num in d["pattern"]:
            free = (free[..., None] + int(step) * torch.arange(int(num))).reshape(-1)
        values = (values + free[None, :]).reshape(dst.shape)
        cmp = binary_fn(d["cmp_op"], "affine_select") if d["cmp_op"] is not None else BINARY["equal"]
        pred = cmp(values, torch.zeros((), dtype=torch.int64)).bool()
        dst_tile, on_true = dst, as_tile(d["on_true_tile"])
    else:
        d = split(args, kwargs, {"pred": REQ, "on_true_tile": REQ, "on_false_value": REQ, "mask": None, "dtype": None})
        pred = d["pred"].t if isinstance(d["pred"], IndexExpr) else torch.as_tensor(d["pred"])
        on_true = as_tile(d["on_true_tile"])
        dst_tile = None
    false_value = fp32_scalar(d["on_false_value"])
    p = pred.bool()
    return emit(
        "affine_select",
        "gpsimd",
        lambda a: torch.where(p.expand(a.shape), f32(a), false_value),
        [on_true],
        dst=dst_tile,
        dtype=None if dst_tile is not None else (dtypes.to_torch(d["dtype"]) if d.get("dtype") else on_true.dtype),
        mask=d.get("mask"),
    )


_PARTITION_REDUCE = {
    "add": lambda a: a.sum(dim=0, keepdim=True),
    "average": lambda a: a.mean(dim=0, keepdim=True),
    "mean": lambda a: a.mean(dim=0, keepdim=True),
    "maximum": lambda a: a.amax(dim=0, keepdim=True),
    "max": lambda a: a.amax(dim=0, keepdim=True),
    "bitwise_or": lambda a: _fold(torch.bitwise_or, a),
    "bitwise_and": lambda a: _fold(torch.bitwise_and, a),
}


def _fold(fn, a):
    out = a[0:1]
    for p in range(1, a.shape[0]):
        out = fn(out, a[p : p + 1])
    return out


def tensor_partition_reduce(*args, **kwargs):
    """Reduces data [P, ...] across its partitions into dst [1, ...] (add,
    average, max, bitwise_or, bitwise_and)."""
    d = split(args, kwargs, {"dst": REQ, "op": REQ, "data": REQ})
    data = as_tile(d["data"], "tensor_partition_reduce data")
    dst = as_tile(d["dst"], "tensor_partition_reduce dst")
    op = name_of(d["op"])
    fn = _PARTITION_REDUCE.get(op)
    if fn is None:
        raise NKIError(
            f"nisa.tensor_partition_reduce: op {d['op']!r} is not add, average, max, bitwise_or or bitwise_and"
        )

    def compute(a):
        return fn(f32(a)).reshape(dst.shape)  # f32 leaves integer tiles as they are

    return emit(
        "tensor_partition_reduce",
        "gpsimd",
        compute,
        [data],
        dst=dst,
        keep_src_shapes=True,
        cost={"elements": math.prod(data.shape)},  # one pass over every element of every partition
    )


def _in_sbuf(tr, name, **tiles):
    for what, t in tiles.items():
        if t.access.buffer.kind is not SBUF:
            raise tr.error(f"nisa.{name}: {what} must be in SBUF (GpSimd cannot reach {t.access.buffer.kind.name})")


def nc_n_gather(*args, **kwargs):
    """dst[p, j] = data[p].flatten()[indices[p].flatten()[j]], each partition on its own."""
    d = split(args, kwargs, {"dst": REQ, "data": REQ, "indices": REQ})
    need(d, "dst", "data", "indices")
    tr = state.require("nisa.nc_n_gather")
    dst, data, idx = (as_tile(d[k], f"nc_n_gather {k}") for k in ("dst", "data", "indices"))
    _in_sbuf(tr, "nc_n_gather", dst=dst, data=data, indices=idx)
    if not (dst.shape[0] == data.shape[0] == idx.shape[0]):
        raise tr.error(
            f"nisa.nc_n_gather: dst {list(dst.shape)}, data {list(data.shape)} and indices {list(idx.shape)} need "
            f"the same partitions"
        )
    if idx.dtype.torch.is_floating_point:
        raise tr.error(f"nisa.nc_n_gather: indices must be integers (nl.uint32), not {idx.dtype}")
    if math.prod(dst.shape) != math.prod(idx.shape):
        raise tr.error(f"nisa.nc_n_gather: dst {list(dst.shape)} must hold one element per index {list(idx.shape)}")
    p, width = data.shape[0], math.prod(data.shape[1:])

    def compute(x, i):
        i = i.reshape(p, -1).to(torch.int64)
        if bool(((i < 0) | (i >= width)).any()):
            bad = int(i[(i < 0) | (i >= width)][0])
            raise NKIError(f"nisa.nc_n_gather: index {bad} is outside the {width} elements of each partition of data")
        return torch.gather(x.reshape(p, width), 1, i).reshape(dst.shape)

    return emit(
        "nc_n_gather",
        "gpsimd",
        compute,
        [data, idx],
        dst=dst,
        keep_src_shapes=True,
        poison_rule=lambda ps: _rows(ps, dst.shape),
        cost={"elements": math.prod(dst.shape)},
    )


def _rows(poisons, shape):
    out = torch.zeros(shape, dtype=torch.bool)
    for ps in poisons:
        if ps is not None:
            out |= ps.reshape(shape[0], -1).any(dim=1).reshape((shape[0],) + (1,) * (len(shape) - 1))
    return out


def nonzero_with_count(*args, **kwargs):
    """On partitions 0, 16, ..., 112 (one per GpSimd core): dst = the
    positions of src's nonzero elements (+ index_offset), then padding_val,
    then their count in the last of its T + 1 elements. Other partitions of
    dst keep their values."""
    d = split(args, kwargs, {"dst": REQ, "src": REQ, "index_offset": 0, "padding_val": -1})
    need(d, "dst", "src")
    tr = state.require("nisa.nonzero_with_count")
    dst, src = as_tile(d["dst"], "nonzero_with_count dst"), as_tile(d["src"], "nonzero_with_count src")
    _in_sbuf(tr, "nonzero_with_count", dst=dst, src=src)
    p, t = src.shape[0], math.prod(src.shape[1:])
    if dst.shape[0] != p or math.prod(dst.shape[1:]) != t + 1:
        raise tr.error(
            f"nisa.nonzero_with_count: dst must be [{p}, {t + 1}] (src's elements and the count), got {list(dst.shape)}"
        )
    offset, pad = int(d["index_offset"]), int(d["padding_val"])
    rows = torch.arange(0, p, 16)

    def compute(x, old):
        out = old.reshape(p, t + 1).clone()
        x = x.reshape(p, t)[rows]
        nz = x != 0
        count = nz.sum(dim=1)
        # each row's nonzero positions first, in order (a stable sort moves zeros behind them)
        order = torch.sort((~nz).to(torch.int8), dim=1, stable=True).indices
        pos = torch.where(torch.arange(t)[None, :] < count[:, None], order + offset, pad)
        out[rows, :t] = pos.to(out.dtype)
        out[rows, t] = count.to(out.dtype)
        return out.reshape(dst.shape)

    def poison(ps):
        src_p, old = ps[0], ps[1]
        out = old.reshape(p, t + 1).clone() if old is not None else torch.zeros(p, t + 1, dtype=torch.bool)
        if src_p is not None:
            out[rows] = src_p.reshape(p, t)[rows].any(dim=1, keepdim=True).expand(len(rows), t + 1)
        else:
            out[rows] = False
        return out.reshape(dst.shape)

    return emit(
        "nonzero_with_count",
        "gpsimd",
        compute,
        [src, dst],
        dst=dst,
        keep_src_shapes=True,
        poison_rule=poison,
        cost={"elements": t * len(rows)},
    )


def local_gather(*args, **kwargs):
    """Each GpSimd core (16 partitions) reads its 16 partitions of `index`
    partition first (column by column), keeps `num_valid_indices`, and for
    each index i gathers `num_elem_per_idx` elements from position i of
    every one of its partitions of `src_buffer` (free dimensions flattened):
    dst[p, k * n + e] = src[p, idx[k] + e]."""
    d = split(
        args, kwargs, {"dst": REQ, "src_buffer": REQ, "index": REQ, "num_elem_per_idx": 1, "num_valid_indices": None}
    )
    need(d, "dst", "src_buffer", "index")
    tr = state.require("nisa.local_gather")
    dst = as_tile(d["dst"], "local_gather dst")
    src, idx = as_tile(d["src_buffer"], "local_gather src_buffer"), as_tile(d["index"], "local_gather index")
    _in_sbuf(tr, "local_gather", dst=dst, src_buffer=src, index=idx)
    p = src.shape[0]
    if p % 16 or idx.shape[0] != p or dst.shape[0] != p:
        raise tr.error(
            f"nisa.local_gather: src_buffer {list(src.shape)}, index {list(idx.shape)} and dst {list(dst.shape)} need "
            f"the same partitions, a multiple of 16 (one GpSimd core per 16)"
        )
    per_core = 16 * math.prod(idx.shape[1:])
    valid = per_core if d.get("num_valid_indices") is None else int(d["num_valid_indices"])
    n = int(d["num_elem_per_idx"])
    if not 0 < valid <= per_core:
        raise tr.error(f"nisa.local_gather: num_valid_indices {valid} must be in 1..{per_core} (the indices per core)")
    if math.prod(dst.shape[1:]) != valid * n:
        raise tr.error(
            f"nisa.local_gather: dst holds {math.prod(dst.shape[1:])} elements per partition, not "
            f"num_valid_indices x num_elem_per_idx = {valid * n}"
        )
    width = math.prod(src.shape[1:])

    def compute(x, i):
        x = x.reshape(p // 16, 16, width)
        i = (
            i.reshape(p // 16, 16, -1).transpose(1, 2).reshape(p // 16, -1)[:, :valid].to(torch.int64)
        )  # partition first
        pos = (i[:, :, None] + torch.arange(n)[None, None, :]).reshape(p // 16, 1, valid * n)
        if bool(((pos < 0) | (pos >= width)).any()):
            bad = int(pos[(pos < 0) | (pos >= width)][0])
            raise NKIError(f"nisa.local_gather: element {bad} is outside the {width} of each partition of src_buffer")
        return torch.gather(x, 2, pos.expand(p // 16, 16, valid * n)).reshape(dst.shape)

    return emit(
        "local_gather",
        "gpsimd",
        compute,
        [src, idx],
        dst=dst,
        keep_src_shapes=True,
        poison_rule=lambda ps: _rows(ps, dst.shape),
        cost={"elements": valid * n * p},
    )
