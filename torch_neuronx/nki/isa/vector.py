"""nki.isa Vector-engine elementwise instructions: `tensor_tensor`,
`tensor_scalar`, `scalar_tensor_tensor`, `tensor_copy` and `reciprocal`
(both call styles, see calls.py)."""

from __future__ import annotations

import math

import torch

from ... import _C
from ..chip import dtypes
from ..trace import state
from ..trace.buffers import PSUM
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip, f32
from ..trace.tile import Tile
from .calls import REQ, need, new_style, out_dtype, split, trainium3_only
from .enums import engine, engine_name
from .ops import BINARY, REDUCE, UNARY, binary_fn, name_of, unary_fn


def tensor_tensor(*args, **kwargs):
    """data1 <op> data2, elementwise."""
    if new_style(args, kwargs, True, 2, "data1"):
        d = split(args, kwargs, {"dst": REQ, "data1": REQ, "data2": REQ, "op": REQ, "engine": engine.unknown})
    else:
        d = split(
            args,
            kwargs,
            {"data1": REQ, "data2": REQ, "op": REQ, "dtype": None, "mask": None, "engine": engine.unknown},
        )
    need(d, "data1", "data2", "op")
    a, b = as_tile(d["data1"], "tensor_tensor data1"), as_tile(d["data2"], "tensor_tensor data2")
    tr = state.require("nisa.tensor_tensor")
    if a.shape[0] != b.shape[0]:
        raise tr.error(f"number of partitions mismatch in tensor_tensor: data1{list(a.shape)}, data2{list(b.shape)}")
    if a.access.buffer.kind is PSUM and b.access.buffer.kind is PSUM:
        raise tr.error("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM")
    fn = binary_fn(d["op"], "tensor_tensor")
    dtype = (
        None
        if d.get("dst") is not None
        else (dtypes.to_torch(d["dtype"]) if d.get("dtype") else dtypes.promote(a.dtype, b.dtype))
    )
    eng = "gpsimd" if name_of(d["op"]) == "power" else engine_name(d.get("engine"), "vector")
    direct = fn if name_of(d["op"]) in _DIRECT_OPS else None
    dst = d.get("dst")
    return emit(
        "tensor_tensor",
        eng,
        lambda x, y: fn(f32(x), f32(y)),
        [a, b],
        dst=dst,
        dtype=dtype,
        mask=d.get("mask"),
        direct=direct,
        carried=name_of(d["op"]) in _ACCUMULATING and dst is not None and _same_place(dst, (a, b)),
    )


# dst = dst <op> x accumulates: AWS's kernels sum into a tile this way across affine_range iterations
_ACCUMULATING = ("add", "multiply", "maximum", "max", "minimum", "min")


def _same_place(dst, operands) -> bool:
    """Whether one of the operands is exactly dst (the same elements of the same buffer)."""
    for t in operands:
        if t.access.buffer is dst.access.buffer and tuple(t.shape) == tuple(dst.shape):
            if all(torch.equal(x, y) for x, y in zip(t.access.arrays, dst.access.arrays)):
                return True
    return False


_DIRECT_OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum")


def _scalar_operand(v):
    return v if isinstance(v, Tile) else (v.item() if hasattr(v, "item") else v)


def _apply(op, x, operand, reverse, what):
    if op is None:
        return x
    if operand is None or (name_of(op) in UNARY and name_of(op) not in BINARY):
        return unary_fn(op, what)(x)
    o = operand if isinstance(operand, torch.Tensor) else torch.tensor(float(operand))
    o = f32(o)
    fn = binary_fn(op, what)
    return fn(o, x) if reverse else fn(x, o)


def tensor_scalar_reduce(*args, **kwargs):
    """dst = data <op0> operand0, and reduce_res = its reduction along the free
    dimensions (reduce_op: add, maximum, minimum), one value per partition."""
    d = split(
        args,
        kwargs,
        {"dst": REQ, "data": REQ, "op0": REQ, "operand0": None, "reduce_op": REQ, "reduce_res": REQ, "reverse0": False},
    )
    need(d, "dst", "data", "op0", "reduce_op", "reduce_res")
    tr = state.require("nisa.tensor_scalar_reduce")
    how = REDUCE.get(name_of(d["reduce_op"]))
    if how not in ("sum", "amax", "amin"):
        raise tr.error(
            f"nisa.tensor_scalar_reduce: reduce_op must be nl.add, nl.maximum or nl.minimum, not {d['reduce_op']!r}"
        )
    out = tensor_scalar(dst=d["dst"], data=d["data"], op0=d["op0"], operand0=d["operand0"], reverse0=d["reverse0"])
    res = as_tile(d["reduce_res"], "tensor_scalar_reduce reduce_res")
    data = as_tile(d["data"], "tensor_scalar_reduce data")
    o0 = _scalar_operand(d["operand0"])
    srcs = [data] + ([o0] if isinstance(o0, Tile) else [])
    axes = list(range(1, data.ndim))

    def reduced(x, *rest):  # of the fp32 results, computed again from the sources, not read back from dst
        r = _apply(d["op0"], f32(x).float(), rest[0] if rest else o0, d["reverse0"], "tensor_scalar_reduce")
        return getattr(r, how)(dim=axes, keepdim=True).reshape((data.shape[0],) + tuple(res.shape[1:]))

    emit("tensor_scalar_reduce", "vector", reduced, srcs, dst=res, keep_src_shapes=True)
    return out


def tensor_scalar(*args, **kwargs):
    """(data <op0> operand0) <op1> operand1, operands scalars or (P, 1) tiles."""
    if new_style(args, kwargs, True, 1, "data"):
        d = split(
            args,
            kwargs,
            {
                "dst": REQ,
                "data": REQ,
                "op0": REQ,
                "operand0": None,
                "reverse0": False,
                "op1": None,
                "operand1": None,
                "reverse1": False,
                "engine": engine.unknown,
            },
        )
    else:
        d = split(
            args,
            kwargs,
            {
                "data": REQ,
                "op0": REQ,
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
    need(d, "data", "op0")
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
        engine_name(d.get("engine"), "vector"),
        compute,
        srcs,
        dst=d.get("dst"),
        shape=data.shape,
        dtype=out_dtype(d, data),
        mask=d.get("mask"),
    )


def scalar_tensor_tensor(*args, **kwargs):
    """(data <op0> operand0) <op1> operand1, operand1 a tile like data."""
    if new_style(args, kwargs, True, 1, "data"):
        d = split(
            args,
            kwargs,
            {
                "dst": REQ,
                "data": REQ,
                "op0": REQ,
                "operand0": REQ,
                "op1": REQ,
                "operand1": REQ,
                "reverse0": False,
                "reverse1": False,
            },
        )
    else:
        d = split(
            args,
            kwargs,
            {
                "data": REQ,
                "op0": REQ,
                "operand0": REQ,
                "op1": REQ,
                "operand1": REQ,
                "reverse0": False,
                "reverse1": False,
                "dtype": None,
                "mask": None,
            },
        )
    need(d, "data", "op0", "operand0", "op1", "operand1")
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
        dtype=out_dtype(d, data),
        mask=d.get("mask"),
    )


def tensor_copy(*args, **kwargs):
    if new_style(args, kwargs, True, 1, "src"):
        d = split(args, kwargs, {"dst": REQ, "src": REQ, "engine": engine.unknown})
    else:
        d = split(args, kwargs, {"src": REQ, "mask": None, "dtype": None, "engine": engine.unknown})
    src = as_tile(d["src"], "tensor_copy src")
    check_on_chip(src, "nisa.tensor_copy")
    dst = d.get("dst")
    fn = (lambda a: a.reshape(dst.shape)) if dst is not None and tuple(dst.shape) != tuple(src.shape) else (lambda a: a)
    return emit(
        "tensor_copy",
        engine_name(d.get("engine"), "vector"),
        fn,
        [src],
        dst=dst,
        shape=None if dst is not None else src.shape,
        dtype=out_dtype(d, src),
        mask=d.get("mask"),
        keep_src_shapes=dst is not None and tuple(dst.shape) != tuple(src.shape),
    )


def reciprocal(*args, **kwargs):
    if new_style(args, kwargs, True, 1, "data"):
        d = split(args, kwargs, {"dst": REQ, "data": REQ})
    else:
        d = split(args, kwargs, {"data": REQ, "dtype": None, "mask": None})
    data = as_tile(d["data"])
    return emit(
        "reciprocal",
        "vector",
        lambda a: torch.reciprocal(f32(a)),
        [data],
        dst=d.get("dst"),
        dtype=out_dtype(d, data),
        mask=d.get("mask"),
    )


# the scan's ops that csrc/nki/NkiScan.cpp runs, by nl name (its ScanOp codes)
_SCAN_OPS = {"add": 0, "subtract": 1, "multiply": 2, "maximum": 3, "max": 3, "minimum": 4, "min": 4}


def tensor_tensor_scan(*args, **kwargs):
    """Per partition, along the free elements: r[i] = op1(op0(data0[i], r[i-1]),
    data1[i]), r[-1] = initial (a scalar or a tile of one element per
    partition); `reverse0`/`reverse1` swap an op's operands. In fp32, step by
    step as the Vector engine runs it, rounded once to dst's dtype (the
    returning style: a new tile of data0's dtype, or `dtype=`)."""
    names = {"data0": REQ, "data1": REQ, "initial": REQ, "op0": REQ, "op1": REQ, "reverse0": False, "reverse1": False}
    if new_style(args, kwargs, True, 2, "data0"):
        d = split(args, kwargs, {"dst": REQ, **names})
    else:
        d = split(args, kwargs, {**names, "dtype": None, "mask": None})
    need(d, "data0", "data1", "initial", "op0", "op1")
    a, b = as_tile(d["data0"], "tensor_tensor_scan data0"), as_tile(d["data1"], "tensor_tensor_scan data1")
    tr = state.require("nisa.tensor_tensor_scan")
    if a.shape[0] != b.shape[0] or math.prod(a.shape) != math.prod(b.shape):
        raise tr.error(
            f"nisa.tensor_tensor_scan: data0{list(a.shape)} and data1{list(b.shape)} need the same partitions "
            f"and the same number of elements per partition"
        )
    if a.access.buffer.kind is PSUM and b.access.buffer.kind is PSUM:
        raise tr.error("nisa.tensor_tensor_scan: data0 and data1 cannot both be in PSUM")
    initial = _scalar_operand(d["initial"])
    f0, f1 = binary_fn(d["op0"], "tensor_tensor_scan"), binary_fn(d["op1"], "tensor_tensor_scan")
    reverse0, reverse1 = bool(d["reverse0"]), bool(d["reverse1"])

    codes = (_SCAN_OPS.get(name_of(d["op0"])), _SCAN_OPS.get(name_of(d["op1"])))

    def compute(x, y, *rest):
        p = x.shape[0]
        x, y = f32(x).float().reshape(p, -1), f32(y).float().reshape(p, -1)
        prev = f32(rest[0]).float().reshape(p) if rest else torch.full((p,), float(initial))
        if None not in codes:  # one pass in C++ (csrc/nki/NkiScan.cpp), the same steps
            return _C._nki_tensor_tensor_scan(x, y, prev, codes[0], codes[1], reverse0, reverse1).reshape(a.shape)
        out = torch.empty_like(x)
        for i in range(x.shape[1]):
            t = f0(prev, x[:, i]) if reverse0 else f0(x[:, i], prev)
            prev = f1(y[:, i], t) if reverse1 else f1(t, y[:, i])
            out[:, i] = prev
        return out.reshape(a.shape)

    return emit(
        "tensor_tensor_scan",
        "vector",
        compute,
        [a, b] + ([initial] if isinstance(initial, Tile) else []),
        dst=d.get("dst"),
        shape=None if d.get("dst") is not None else a.shape,
        dtype=out_dtype(d, a),
        mask=d.get("mask"),
    )


def nc_stream_shuffle(*args, **kwargs):
    """Moves partitions within each quadrant of 32: dst partition q*32+i takes
    src partition q*32+shuffle_mask[i], or keeps its value where the mask is 255.
    The same 32-entry mask applies to every quadrant."""
    d = split(args, kwargs, {"dst": REQ, "src": REQ, "shuffle_mask": REQ})
    need(d, "dst", "src", "shuffle_mask")
    dst, src = as_tile(d["dst"], "nc_stream_shuffle dst"), as_tile(d["src"], "nc_stream_shuffle src")
    tr = state.require("nisa.nc_stream_shuffle")
    mask = [int(m) for m in d["shuffle_mask"]]
    if len(mask) != 32 or any(not (0 <= m < 32 or m == 255) for m in mask):
        raise tr.error(
            f"nisa.nc_stream_shuffle: shuffle_mask must be 32 partitions of a quadrant (0-31) or 255, got {mask}"
        )
    if dst.dtype != src.dtype or math.prod(dst.shape[1:]) != math.prod(src.shape[1:]):
        raise tr.error(
            f"nisa.nc_stream_shuffle: dst {list(dst.shape)} {dst.dtype} and src {list(src.shape)} {src.dtype} need "
            f"the same dtype and the same number of elements per partition"
        )
    pd, ps = dst.shape[0], src.shape[0]
    take = [(j, (j // 32) * 32 + mask[j % 32]) for j in range(pd) if mask[j % 32] != 255]
    if any(s >= ps for _, s in take):
        raise tr.error(f"nisa.nc_stream_shuffle: the mask reads a partition past src's {ps}")
    rows = torch.tensor([j for j, _ in take], dtype=torch.int64)
    sources = torch.tensor([s for _, s in take], dtype=torch.int64)
    if len(take) == pd:  # every partition is written: dst's old values are not read
        return emit(
            "nc_stream_shuffle",
            "vector",
            lambda x: x.reshape(ps, -1)[sources].reshape(dst.shape),
            [src],
            dst=dst,
            keep_src_shapes=True,
            poison_rule=lambda ps_: ps_[0].reshape(ps, -1)[sources].reshape(dst.shape),
        )

    def compute(x, old):
        out = old.reshape(pd, -1).clone()
        out[rows] = x.reshape(ps, -1)[sources].to(out.dtype)
        return out.reshape(dst.shape)

    return emit("nc_stream_shuffle", "vector", compute, [src, dst], dst=dst)


quantize_mx = trainium3_only("quantize_mx")  # MX: quantizing to microscaled fp8
