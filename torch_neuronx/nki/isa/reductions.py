"""nki.isa Vector-engine reductions along the free axes: `tensor_reduce`,
`bn_stats` / `bn_aggr` (mean and variance in two steps) and `max8` (both
call styles, see calls.py)."""

from __future__ import annotations

import math

import torch

from ..trace import state
from ..trace.emit import emit
from ..trace.operands import as_tile, f32, free_axes
from ..trace.tile import Tile
from .calls import REQ, need, new_style, out_dtype, split
from .ops import reduce_fn


def tensor_reduce(*args, **kwargs):
    """Reduces the free axes `axis` of data with op (negate: times -1)."""
    if new_style(args, kwargs, False):
        d = split(args, kwargs, {"dst": REQ, "op": REQ, "data": REQ, "axis": REQ, "negate": False, "keepdims": False})
    else:
        d = split(
            args,
            kwargs,
            {"op": REQ, "data": REQ, "axis": REQ, "mask": None, "dtype": None, "negate": False, "keepdims": False},
        )
    need(d, "op", "data", "axis")
    data = as_tile(d["data"], "tensor_reduce data")
    axes = free_axes(data, d["axis"], "tensor_reduce")
    fn = reduce_fn(d["op"], "tensor_reduce")
    keep = d.get("keepdims", False)
    shape = (
        tuple(1 if i in axes else s for i, s in enumerate(data.shape))
        if keep
        else tuple(s for i, s in enumerate(data.shape) if i not in axes)
    )
    dst = d.get("dst")
    if dst is not None and tuple(dst.shape) != shape:
        shape = tuple(dst.shape)
    sign = -1.0 if d.get("negate") else 1.0

    def compute(a):
        r = fn(f32(a), axes)
        r = r * sign if sign != 1.0 else r
        return r.reshape((a.shape[0],) + tuple(shape[1:]))

    return emit(
        "tensor_reduce",
        "vector",
        compute,
        [data],
        dst=dst,
        shape=shape,
        dtype=out_dtype(d, data),
        mask=d.get("mask"),
        keep_src_shapes="partition",
        cost={"elements": math.prod(data.shape)},  # the engine reads every input element
    )


def bn_stats(*args, **kwargs):
    """Per partition over at most bn_stats_fmax elements: [count, mean, M2]
    of the even and of the odd positions (6 values)."""
    if new_style(args, kwargs, True, 1, "data"):
        d = split(args, kwargs, {"dst": REQ, "data": REQ})
    else:
        d = split(args, kwargs, {"data": REQ, "mask": None, "dtype": None})
    data = as_tile(d["data"], "bn_stats data")
    tr = state.require("nisa.bn_stats")
    f = math.prod(data.shape[1:])
    if f > tr.limits.bn_stats_fmax:
        raise tr.error(
            f"nisa.bn_stats: {f} free elements per partition in {list(data.shape)} exceed "
            f"bn_stats_fmax = {tr.limits.bn_stats_fmax}; split the row and combine with bn_aggr"
        )

    def compute(a):
        a = f32(a).reshape(a.shape[0], -1)
        p, f = a.shape
        # two passes over (even, odd) pairs: [..., 0] holds the even positions, [..., 1] the odd
        # (torch.var_mean is ten times slower here on the CPU)
        if f % 2 == 0:
            n = float(f // 2)
            pairs = a.reshape(p, f // 2, 2)
            mean = pairs.sum(dim=1) / n
            m2 = (pairs - mean[:, None, :]).square().sum(dim=1)
            c = torch.full((p,), n)
            return torch.stack([c, mean[:, 0], m2[:, 0], c, mean[:, 1], m2[:, 1]], dim=1)
        cols = []
        for part in (a[:, 0::2], a[:, 1::2]):
            n = max(part.shape[1], 1)
            mean = part.sum(dim=1) / n
            cols += [torch.full((p,), float(part.shape[1])), mean, (part - mean[:, None]).square().sum(dim=1)]
        return torch.stack(cols, dim=1)

    return emit(
        "bn_stats",
        "vector",
        compute,
        [data],
        dst=d.get("dst"),
        shape=(data.shape[0], 6),
        dtype=out_dtype(d, data) if d.get("dst") is None else None,
        mask=d.get("mask"),
        keep_src_shapes="partition",
        cost={"elements": data.shape[0] * f},
    )


def bn_aggr(*args, **kwargs):
    """Combines (count, mean, M2) triples into [mean, variance] per partition."""
    if new_style(args, kwargs, True, 1, "data"):
        d = split(args, kwargs, {"dst": REQ, "data": REQ})
    else:
        d = split(args, kwargs, {"data": REQ, "mask": None, "dtype": None})
    data = as_tile(d["data"], "bn_aggr data")

    def compute(a):
        a = f32(a).reshape(a.shape[0], -1, 3)
        count, mean, m2 = a[..., 0], a[..., 1], a[..., 2]
        n = count.sum(dim=1)
        total_mean = (count * mean).sum(dim=1) / n
        var = (m2 + count * (mean - total_mean[:, None]) ** 2).sum(dim=1) / n
        return torch.stack([total_mean, var], dim=1)

    return emit(
        "bn_aggr",
        "vector",
        compute,
        [data],
        dst=d.get("dst"),
        shape=(data.shape[0], 2),
        dtype=out_dtype(d, data) if d.get("dst") is None else None,
        mask=d.get("mask"),
        keep_src_shapes="partition",
    )


def max8(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = split(args, kwargs, {"dst": REQ, "src": REQ})
    else:
        d = split(args, kwargs, {"src": REQ, "mask": None, "dtype": None})
    src = as_tile(d["src"], "max8 src")
    return emit(
        "max8",
        "vector",
        lambda a: f32(a).reshape(a.shape[0], -1).topk(8, dim=1).values,
        [src],
        dst=d.get("dst"),
        shape=(src.shape[0], 8),
        dtype=out_dtype(d, src),
        keep_src_shapes="partition",
    )
