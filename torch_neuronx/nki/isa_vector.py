"""nki.isa Vector-engine instructions (both call styles, see isa.py)."""

from __future__ import annotations

import math

import torch

from . import dtypes as _dt
from . import language as nl
from . import trace as _tracing
from .emit import as_tile, emit, f32
from .isa_args import (
    _BINARY,
    _REQ,
    _UNARY,
    _binary_fn,
    _engine,
    _name,
    _need,
    _new_style,
    _out_dtype,
    _reduce_fn,
    _split,
    _unary_fn,
    engine,
)
from .tile import Tile
from .trace import PSUM


def tensor_tensor(*args, **kwargs):
    """data1 <op> data2, elementwise."""
    if _new_style(args, kwargs, True, 2):
        d = _split(args, kwargs, {"dst": _REQ, "data1": _REQ, "data2": _REQ, "op": _REQ, "engine": engine.unknown})
    else:
        d = _split(
            args,
            kwargs,
            {"data1": _REQ, "data2": _REQ, "op": _REQ, "dtype": None, "mask": None, "engine": engine.unknown},
        )
    _need(d, "data1", "data2", "op")
    a, b = as_tile(d["data1"], "tensor_tensor data1"), as_tile(d["data2"], "tensor_tensor data2")
    tr = _tracing.require("nisa.tensor_tensor")
    if a.shape[0] != b.shape[0]:
        raise tr.error(f"number of partitions mismatch in tensor_tensor: data1{list(a.shape)}, data2{list(b.shape)}")
    if a.access.buffer.kind is PSUM and b.access.buffer.kind is PSUM:
        raise tr.error("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM")
    fn = _binary_fn(d["op"], "tensor_tensor")
    dtype = (
        None
        if d.get("dst") is not None
        else (_dt.to_torch(d["dtype"]) if d.get("dtype") else _dt.promote(a.dtype, b.dtype))
    )
    eng = "gpsimd" if _name(d["op"]) == "power" else _engine(d.get("engine"), "vector")
    direct = fn if _name(d["op"]) in _DIRECT_OPS else None
    return emit(
        "tensor_tensor",
        eng,
        lambda x, y: fn(f32(x), f32(y)),
        [a, b],
        dst=d.get("dst"),
        dtype=dtype,
        mask=d.get("mask"),
        direct=direct,
    )


_DIRECT_OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum")


def _scalar_operand(v):
    return v if isinstance(v, Tile) else (v.item() if hasattr(v, "item") else v)


def _apply(op, x, operand, reverse, what):
    if op is None:
        return x
    if operand is None or (_name(op) in _UNARY and _name(op) not in _BINARY):
        return _unary_fn(op, what)(x)
    o = operand if isinstance(operand, torch.Tensor) else torch.tensor(float(operand))
    o = f32(o)
    fn = _binary_fn(op, what)
    return fn(o, x) if reverse else fn(x, o)


def tensor_scalar(*args, **kwargs):
    """(data <op0> operand0) <op1> operand1, operands scalars or (P, 1) tiles."""
    if _new_style(args, kwargs, True, 1):
        d = _split(
            args,
            kwargs,
            {
                "dst": _REQ,
                "data": _REQ,
                "op0": _REQ,
                "operand0": None,
                "reverse0": False,
                "op1": None,
                "operand1": None,
                "reverse1": False,
                "engine": engine.unknown,
            },
        )
    else:
        d = _split(
            args,
            kwargs,
            {
                "data": _REQ,
                "op0": _REQ,
                "operand0": None,
                "reverse0": False,
                "op1": None,
                "operand1": None,
                "reverse1": False,
                "dtype": None,
                "mask": None,
                "engine": engine.unknown,
            },
        )
    _need(d, "data", "op0")
    data = as_tile(d["data"], "tensor_scalar data")
    o0, o1 = _scalar_operand(d["operand0"]), _scalar_operand(d["operand1"])
    srcs = [data] + [o for o in (o0, o1) if isinstance(o, Tile)]
    t0, t1 = isinstance(o0, Tile), isinstance(o1, Tile)

    def compute(x, *rest):
        rest = list(rest)
        a0 = rest.pop(0) if t0 else o0
        a1 = rest.pop(0) if t1 else o1
        r = _apply(d["op0"], f32(x), a0, d["reverse0"], "tensor_scalar")
        return _apply(d["op1"], r, a1, d["reverse1"], "tensor_scalar")

    return emit(
        "tensor_scalar",
        _engine(d.get("engine"), "vector"),
        compute,
        srcs,
        dst=d.get("dst"),
        shape=data.shape,
        dtype=_out_dtype(d, data),
        mask=d.get("mask"),
    )


def scalar_tensor_tensor(*args, **kwargs):
    """(data <op0> operand0) <op1> operand1, operand1 a tile like data."""
    if _new_style(args, kwargs, True, 1):
        d = _split(
            args,
            kwargs,
            {
                "dst": _REQ,
                "data": _REQ,
                "op0": _REQ,
                "operand0": _REQ,
                "op1": _REQ,
                "operand1": _REQ,
                "reverse0": False,
                "reverse1": False,
            },
        )
    else:
        d = _split(
            args,
            kwargs,
            {
                "data": _REQ,
                "op0": _REQ,
                "operand0": _REQ,
                "op1": _REQ,
                "operand1": _REQ,
                "reverse0": False,
                "reverse1": False,
                "dtype": None,
                "mask": None,
            },
        )
    _need(d, "data", "op0", "operand0", "op1", "operand1")
    data, o1 = as_tile(d["data"]), as_tile(d["operand1"])
    o0 = _scalar_operand(d["operand0"])
    srcs = [data, o1] + ([o0] if isinstance(o0, Tile) else [])

    def compute(x, y, *rest):
        a0 = rest[0] if rest else o0
        r = _apply(d["op0"], f32(x), a0, d["reverse0"], "scalar_tensor_tensor")
        return _apply(d["op1"], r, f32(y), d["reverse1"], "scalar_tensor_tensor")

    return emit(
        "scalar_tensor_tensor",
        "vector",
        compute,
        srcs,
        dst=d.get("dst"),
        shape=data.shape,
        dtype=_out_dtype(d, data),
        mask=d.get("mask"),
    )


def tensor_reduce(*args, **kwargs):
    """Reduces the free axes `axis` of data with op (negate: times -1)."""
    if _new_style(args, kwargs, False):
        d = _split(
            args, kwargs, {"dst": _REQ, "op": _REQ, "data": _REQ, "axis": _REQ, "negate": False, "keepdims": False}
        )
    else:
        d = _split(
            args,
            kwargs,
            {"op": _REQ, "data": _REQ, "axis": _REQ, "mask": None, "dtype": None, "negate": False, "keepdims": False},
        )
    _need(d, "op", "data", "axis")
    data = as_tile(d["data"], "tensor_reduce data")
    axes = nl._axes(data, d["axis"], "tensor_reduce")
    fn = _reduce_fn(d["op"], "tensor_reduce")
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
        dtype=_out_dtype(d, data),
        mask=d.get("mask"),
        keep_src_shapes="partition",
    )


def tensor_copy(*args, **kwargs):
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ, "engine": engine.unknown})
    else:
        d = _split(args, kwargs, {"src": _REQ, "mask": None, "dtype": None, "engine": engine.unknown})
    src = as_tile(d["src"], "tensor_copy src")
    nl._check_on_chip(src, "nisa.tensor_copy")
    dst = d.get("dst")
    fn = (lambda a: a.reshape(dst.shape)) if dst is not None and tuple(dst.shape) != tuple(src.shape) else (lambda a: a)
    return emit(
        "tensor_copy",
        _engine(d.get("engine"), "vector"),
        fn,
        [src],
        dst=dst,
        shape=None if dst is not None else src.shape,
        dtype=_out_dtype(d, src),
        mask=d.get("mask"),
        keep_src_shapes=dst is not None and tuple(dst.shape) != tuple(src.shape),
    )


def reciprocal(*args, **kwargs):
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ})
    else:
        d = _split(args, kwargs, {"data": _REQ, "dtype": None, "mask": None})
    data = as_tile(d["data"])
    return emit(
        "reciprocal",
        "vector",
        lambda a: torch.reciprocal(f32(a)),
        [data],
        dst=d.get("dst"),
        dtype=_out_dtype(d, data),
        mask=d.get("mask"),
    )


def bn_stats(*args, **kwargs):
    """Per partition over at most bn_stats_fmax elements: [count, mean, M2]
    of the even and of the odd positions (6 values)."""
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ})
    else:
        d = _split(args, kwargs, {"data": _REQ, "mask": None, "dtype": None})
    data = as_tile(d["data"], "bn_stats data")
    tr = _tracing.require("nisa.bn_stats")
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
        dtype=_out_dtype(d, data) if d.get("dst") is None else None,
        mask=d.get("mask"),
        keep_src_shapes="partition",
        cost={"elements": data.shape[0] * f},
    )


def bn_aggr(*args, **kwargs):
    """Combines (count, mean, M2) triples into [mean, variance] per partition."""
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ})
    else:
        d = _split(args, kwargs, {"data": _REQ, "mask": None, "dtype": None})
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
        dtype=_out_dtype(d, data) if d.get("dst") is None else None,
        mask=d.get("mask"),
        keep_src_shapes="partition",
    )
