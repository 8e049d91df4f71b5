"""nki.isa DMA instructions: `dma_copy` (HBM <-> SBUF, SBUF -> SBUF; an
accumulating dst_rmw_op), `dma_transpose` and `dma_compute` (the DMA
engines' scaled sum of several sources)."""

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


# AWS's permutation when no axes are given: the first and last axes swap
_DEFAULT_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def dma_transpose(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = split(args, kwargs, {"dst": REQ, "src": REQ, "axes": None})
    else:
        d = split(args, kwargs, {"src": REQ, "axes": None, "mask": None, "dtype": None})
    src = as_tile(d["src"], "dma_transpose src")
    axes = tuple(d.get("axes") or _DEFAULT_AXES.get(src.ndim, ()))
    if sorted(axes) != list(range(src.ndim)):
        tr = state.require("nisa.dma_transpose")
        raise tr.error(
            f"nisa.dma_transpose: axes {axes} do not permute a {src.ndim}-d source; the DMA engines transpose "
            f"with (1, 0), (2, 1, 0) or (3, 1, 2, 0)"
        )
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


def dma_compute(*args, **kwargs):
    """dst = srcs[0] * scales[0] + srcs[1] * scales[1] + ... in fp32, cast to
    dst's dtype. With an indirect destination that a source also reads
    (read-modify-write scatter), `unique_indices=False` adds each source
    element once per index that reaches it, as the DMA engines do."""
    d = split(
        args,
        kwargs,
        {
            "dst": REQ,
            "srcs": REQ,
            "reduce_op": None,
            "scales": None,
            "unique_indices": True,
            "oob_mode": oob_mode.error,
        },
    )
    need(d, "dst", "srcs")
    tr = state.require("nisa.dma_compute")
    dst = as_tile(d["dst"], "dma_compute dst")
    srcs = [as_tile(t, "dma_compute srcs") for t in d["srcs"]]
    if not srcs:
        raise tr.error("nisa.dma_compute needs at least one source")
    if d.get("reduce_op") is not None and name_of(d["reduce_op"]) != "add":
        raise tr.error(f"nisa.dma_compute: reduce_op must be nl.add (the DMA engines only add), not {d['reduce_op']!r}")
    scales = [1.0] * len(srcs) if d.get("scales") is None else [float(x) for x in d["scales"]]
    if len(scales) != len(srcs):
        raise tr.error(f"nisa.dma_compute: {len(srcs)} sources but {len(scales)} scales")
    for t in srcs + [dst]:
        if t.access.buffer.kind is PSUM:
            raise tr.error("nisa.dma_compute: PSUM is not reachable by DMA (copy it to SBUF first)")
        if math.prod(t.shape) != math.prod(dst.shape):
            raise tr.error(f"nisa.dma_compute: element counts differ: {list(t.shape)} and dst {list(dst.shape)}")
    skip = d.get("oob_mode") == oob_mode.skip
    nbytes = sum(dma_cost(t, dst)["bytes"] for t in srcs)
    if dst.is_indirect() and not d.get("unique_indices", True):
        same = [i for i, t in enumerate(srcs) if t.access.buffer is dst.access.buffer and t.is_indirect()]
        if same and scales[same[0]] == 1.0:  # dst[idx] += the other sources, once per index
            rest = [(t, c) for i, (t, c) in enumerate(zip(srcs, scales)) if i != same[0]]
            emit(
                "dma_compute",
                "dma",
                lambda *vals: _scaled_sum(vals, [c for _, c in rest], dst.shape),
                [t for t, _ in rest],
                dst=dst,
                accumulate=True,
                cost={"bytes": nbytes},
                oob_skip=skip,
            )
            return dst
    emit(
        "dma_compute",
        "dma",
        lambda *vals: _scaled_sum(vals, scales, dst.shape),
        srcs,
        dst=dst,
        cost={"bytes": nbytes},
        oob_skip=skip,
    )
    return dst


def _scaled_sum(vals, scales, shape):
    total = None
    for v, c in zip(vals, scales):
        term = f32(v).float().reshape(shape) * c
        total = term if total is None else total + term
    return total
