"""nki.isa DMA instructions: `dma_copy` (HBM <-> SBUF, SBUF -> SBUF; an
accumulating dst_rmw_op) and `dma_transpose`."""

from __future__ import annotations

import math

from ..errors import NKIUnsupported
from ..trace import state
from ..trace.buffers import PSUM
from ..trace.emit import emit
from ..trace.operands import as_tile, dma_cost, f32
from ..trace.tile import Tile
from .calls import REQ, need, out_dtype, split
from .enums import dge_mode, oob_mode
from .ops import name_of


def dma_copy(*args, **kwargs):
    """Copies src to dst (HBM <-> SBUF, or SBUF -> SBUF); dst_rmw_op=np.add accumulates."""
    d = split(
        args,
        kwargs,
        {
            "dst": REQ,
            "src": REQ,
            "mask": None,
            "dst_rmw_op": None,
            "oob_mode": oob_mode.error,
            "dge_mode": dge_mode.unknown,
        },
    )
    need(d, "dst", "src")
    dst, src = as_tile(d["dst"], "dma_copy dst"), as_tile(d["src"], "dma_copy src")
    tr = state.require("nisa.dma_copy")
    if src.access.buffer.kind is PSUM or dst.access.buffer.kind is PSUM:
        raise tr.error(
            "nisa.dma_copy moves data between HBM and SBUF; PSUM is not reachable by DMA "
            "(copy PSUM to SBUF with nisa.tensor_copy first)"
        )
    if math.prod(src.shape) != math.prod(dst.shape):
        raise tr.error(f"nisa.dma_copy: element counts differ: src {list(src.shape)}, dst {list(dst.shape)}")
    fn = (lambda a: a) if tuple(src.shape) == tuple(dst.shape) else (lambda a: a.reshape(dst.shape))
    rmw = d.get("dst_rmw_op")
    if rmw is not None and name_of(rmw) != "add":
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
        oob_skip=d.get("oob_mode") == oob_mode.skip,
    )
    return dst


def dma_transpose(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = split(args, kwargs, {"dst": REQ, "src": REQ, "axes": None})
    else:
        d = split(args, kwargs, {"src": REQ, "axes": None, "mask": None, "dtype": None})
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
        dtype=out_dtype(d, src),
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].permute(axes),
        cost=dma_cost(src),
    )
