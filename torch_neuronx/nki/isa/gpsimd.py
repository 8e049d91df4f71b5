"""nki.isa GpSimd instructions: `iota` (index values), `affine_select`
(a select on an index predicate), both call styles (see calls.py), and
`tensor_partition_reduce` (a reduction across partitions)."""

from __future__ import annotations

import math

import torch

from ..chip import dtypes
from ..errors import NKIError
from ..trace.emit import emit
from ..trace.indexing import IndexExpr
from ..trace.operands import as_tile, f32, fp32_scalar
from ..trace.tile import Tile
from .calls import REQ, split
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
