"""nki.isa GpSimd instructions, fills and DMA (both call styles, see isa.py)."""

from __future__ import annotations

import math

import torch

from . import dtypes as _dt
from . import language as nl
from . import trace as _tracing
from .emit import as_tile, dma_cost, emit, f32, new_tile
from .errors import NKIError, NKIUnsupported
from .indexing import IndexExpr
from .isa_args import _REQ, _binary_fn, _name, _need, _out_dtype, _split, dge_mode, engine, oob_mode
from .tile import Tile
from .trace import PSUM, SBUF


def iota(*args, **kwargs):
    """Writes index values: legacy iota(expr, dtype) with an nl.arange expression;
    new iota(dst, pattern, offset=0, channel_multiplier=0)."""
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = _split(args, kwargs, {"dst": _REQ, "pattern": _REQ, "offset": 0, "channel_multiplier": 0})
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
    d = _split(args, kwargs, {"expr": _REQ, "dtype": _REQ, "mask": None})
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
        dtype=_dt.to_torch(d["dtype"]),
        mask=d.get("mask"),
        make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, const),
    )


def memset(*args, **kwargs):
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = _split(args, kwargs, {"dst": _REQ, "value": _REQ, "engine": engine.unknown})
        return nl._fill(as_tile(d["dst"]), d["value"])
    d = _split(args, kwargs, {"shape": _REQ, "value": _REQ, "dtype": _REQ, "mask": None, "engine": engine.unknown})
    shape, par = nl._shape_and_par(d["shape"])
    t = new_tile(shape, d["dtype"], SBUF)
    return nl._fill(t, d["value"])


def affine_select(*args, **kwargs):
    """on_true where an index predicate holds, else on_false_value."""
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = _split(
            args,
            kwargs,
            {
                "dst": _REQ,
                "pattern": _REQ,
                "channel_multiplier": _REQ,
                "on_true_tile": _REQ,
                "on_false_value": _REQ,
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
        cmp = _binary_fn(d["cmp_op"] or nl.equal, "affine_select")
        pred = cmp(values, torch.zeros((), dtype=torch.int64)).bool()
        dst_tile, on_true = dst, as_tile(d["on_true_tile"])
    else:
        d = _split(
            args, kwargs, {"pred": _REQ, "on_true_tile": _REQ, "on_false_value": _REQ, "mask": None, "dtype": None}
        )
        pred = d["pred"].t if isinstance(d["pred"], IndexExpr) else torch.as_tensor(d["pred"])
        on_true = as_tile(d["on_true_tile"])
        dst_tile = None
    false_value = float(d["on_false_value"])
    p = pred.bool()
    return emit(
        "affine_select",
        "gpsimd",
        lambda a: torch.where(p.expand(a.shape), f32(a), false_value),
        [on_true],
        dst=dst_tile,
        dtype=None if dst_tile is not None else (_dt.to_torch(d["dtype"]) if d.get("dtype") else on_true.dtype),
        mask=d.get("mask"),
    )


def max8(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ})
    else:
        d = _split(args, kwargs, {"src": _REQ, "mask": None, "dtype": None})
    src = as_tile(d["src"], "max8 src")
    return emit(
        "max8",
        "vector",
        lambda a: f32(a).reshape(a.shape[0], -1).topk(8, dim=1).values,
        [src],
        dst=d.get("dst"),
        shape=(src.shape[0], 8),
        dtype=_out_dtype(d, src),
        keep_src_shapes="partition",
    )


# ---------------------------------------------------------------- DMA
def dma_copy(*args, **kwargs):
    """Copies src to dst (HBM <-> SBUF, or SBUF -> SBUF); dst_rmw_op=np.add accumulates."""
    d = _split(
        args,
        kwargs,
        {
            "dst": _REQ,
            "src": _REQ,
            "mask": None,
            "dst_rmw_op": None,
            "oob_mode": oob_mode.error,
            "dge_mode": dge_mode.unknown,
        },
    )
    _need(d, "dst", "src")
    dst, src = as_tile(d["dst"], "dma_copy dst"), as_tile(d["src"], "dma_copy src")
    tr = _tracing.require("nisa.dma_copy")
    if src.access.buffer.kind is PSUM or dst.access.buffer.kind is PSUM:
        raise tr.error(
            "nisa.dma_copy moves data between HBM and SBUF; PSUM is not reachable by DMA "
            "(copy PSUM to SBUF with nisa.tensor_copy first)"
        )
    if math.prod(src.shape) != math.prod(dst.shape):
        raise tr.error(f"nisa.dma_copy: element counts differ: src {list(src.shape)}, dst {list(dst.shape)}")
    fn = (lambda a: a) if tuple(src.shape) == tuple(dst.shape) else (lambda a: a.reshape(dst.shape))
    rmw = d.get("dst_rmw_op")
    if rmw is not None and _name(rmw) != "add":
        raise NKIUnsupported(f"nisa.dma_copy(dst_rmw_op={rmw!r}): only np.add / nl.add is supported")
    emit(
        "dma_copy",
        "dma",
        (lambda a: f32(fn(a))) if rmw is not None else fn,
        [src],
        dst=dst,
        mask=d.get("mask"),
        accumulate=rmw is not None,
        keep_src_shapes=tuple(src.shape) != tuple(dst.shape),
        cost=dma_cost(src, dst),
    )
    return dst


def dma_transpose(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ, "axes": None})
    else:
        d = _split(args, kwargs, {"src": _REQ, "axes": None, "mask": None, "dtype": None})
    src = as_tile(d["src"], "dma_transpose src")
    axes = tuple(d.get("axes") or tuple(reversed(range(src.ndim))))
    shape = tuple(src.shape[a] for a in axes)
    return emit(
        "dma_transpose",
        "dma",
        lambda a: a.permute(axes),
        [src],
        dst=d.get("dst"),
        shape=shape,
        dtype=_out_dtype(d, src),
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].permute(axes),
        cost=dma_cost(src),
    )
