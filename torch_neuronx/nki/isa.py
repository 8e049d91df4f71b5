"""`nki.isa` (`nisa`): one instruction per engine, in both of AWS's styles.

The tutorials' (NKI 0.1) style returns a new tile: `t = nisa.activation(op=nl.exp, data=x)`,
`psum += nisa.nc_matmul(a, b)`. The newer style (NKI 0.2+) writes an explicit
destination given first: `nisa.activation(dst, op=nl.exp, data=x)`,
`nisa.nc_matmul(dst, a, b)`. A call is in the newer style when `dst=` is passed
or its first positional argument is a tile where the older style expects an
op, shape or expression. Ops (`op=`, `op0=`, ...) may be `nl` functions or the
NumPy functions AWS's samples pass (`np.add`, `np.max`, `np.exp`, ...).
"""

from __future__ import annotations

import math

import torch

from . import dtypes as _dt
from . import language as nl
from . import trace as _tracing
from .emit import as_tile, emit, f32
from .errors import NKIUnsupported
from .isa_args import (
    _REDUCE,
    _REQ,
    NkiValidationError,  # noqa: F401
    _engine,
    _name,
    _need,
    _new_style,
    _out_dtype,
    _split,
    _unary_fn,
    dge_mode,  # noqa: F401
    engine,
    fp32,  # noqa: F401
    get_nc_version,  # noqa: F401
    gpsimd_engine,  # noqa: F401
    matmul_perf_mode,  # noqa: F401
    nc_version,  # noqa: F401
    oob_mode,  # noqa: F401
    reduce_cmd,
    scalar_engine,  # noqa: F401
    tensor_engine,  # noqa: F401
    unknown_engine,  # noqa: F401
    vector_engine,  # noqa: F401
)
from .isa_gpsimd_dma import affine_select, dma_copy, dma_transpose, iota, max8, memset  # noqa: F401
from .isa_vector import (
    bn_aggr,  # noqa: F401
    bn_stats,  # noqa: F401
    reciprocal,  # noqa: F401
    scalar_tensor_tensor,  # noqa: F401
    tensor_copy,  # noqa: F401
    tensor_reduce,  # noqa: F401
    tensor_scalar,  # noqa: F401
    tensor_tensor,  # noqa: F401
)
from .tile import Tile
from .trace import PSUM, SBUF


# ---------------------------------------------------------------- Tensor engine
def nc_matmul(*args, **kwargs):
    """stationary.T @ moving into PSUM (fp32 accumulation)."""
    if _new_style(args, kwargs, True, 2):
        d = _split(
            args,
            kwargs,
            {
                "dst": _REQ,
                "stationary": _REQ,
                "moving": _REQ,
                "is_stationary_onezero": False,
                "is_moving_onezero": False,
                "is_transpose": False,
                "accumulate": None,
                "tile_position": (),
                "tile_size": (),
                "perf_mode": None,
            },
        )
    else:
        d = _split(
            args,
            kwargs,
            {
                "stationary": _REQ,
                "moving": _REQ,
                "is_stationary_onezero": False,
                "is_moving_onezero": False,
                "is_transpose": False,
                "tile_position": (),
                "tile_size": (),
                "mask": None,
            },
        )
        d.setdefault("dst", None)
    _need(d, "stationary", "moving")
    if d.get("is_transpose"):
        raise NKIUnsupported("nisa.nc_matmul(is_transpose=True) is not supported yet: use nisa.nc_transpose")
    stationary, moving, dst = as_tile(d["stationary"]), as_tile(d["moving"]), d.get("dst")
    if dst is None:
        return nl._matmul_engine(stationary, moving, "nc_matmul", mask=d.get("mask"))
    dst = as_tile(dst, "nc_matmul dst")
    acc = d.get("accumulate")
    if acc is None:  # the first write to PSUM overwrites, later ones accumulate
        acc = (
            not bool(dst.access.gather(dst.access.buffer.poison).all())
            if dst.access.buffer.poison is not None
            else False
        )
    if acc:
        tr = _tracing.require("nisa.nc_matmul")
        tmp = nl._matmul_engine(stationary, moving, "nc_matmul")
        tr.retarget(tr.instrs[-1], tmp.access.buffer, dst.access, accumulate=True)
    else:
        nl._matmul_engine(stationary, moving, "nc_matmul", dst=dst)
    return dst


def nc_transpose(*args, **kwargs):
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ, "engine": engine.unknown})
    else:
        d = _split(args, kwargs, {"data": _REQ, "mask": None, "dtype": None, "engine": engine.unknown})
    data = as_tile(d["data"], "nc_transpose data")
    tr = _tracing.require("nisa.nc_transpose")
    eng = _engine(d.get("engine"), "tensor")
    if data.ndim < 2:
        raise tr.error(f"nisa.nc_transpose takes a tile with a free dimension, got {list(data.shape)}")
    p, f = data.shape[0], math.prod(data.shape[1:])
    limit = 32 if eng == "vector" else tr.limits.pmax
    if p > limit or f > limit:
        raise tr.error(f"nisa.nc_transpose on the {eng} engine: tile {list(data.shape)} exceeds {limit} x {limit}")
    if eng == "tensor" and data.access.buffer.kind is PSUM:
        raise tr.error("nisa.nc_transpose on the Tensor engine reads SBUF, not PSUM")
    dst = d.get("dst")
    kind = PSUM if eng == "tensor" else SBUF
    dtype = None if dst is not None else (_dt.to_torch(d["dtype"]) if d.get("dtype") else data.dtype)
    if kind is PSUM and dtype not in (None, torch.float32, torch.bfloat16):
        dtype = torch.float32
    return emit(
        "nc_transpose",
        eng,
        lambda a: a.reshape(a.shape[0], -1).t(),
        [data],
        dst=dst,
        shape=(f, p),
        dtype=dtype,
        kind=kind,
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].reshape(p, -1).t(),
        cost={"k": p, "m": p, "n": f, "in_dtype": data.dtype},
    )


# ---------------------------------------------------------------- Scalar engine
def activation(*args, **kwargs):
    """op(data * scale + bias), with an optional sum along the free axes into reduce_res."""
    new = _new_style(args, kwargs, False)
    if new:
        d = _split(
            args,
            kwargs,
            {
                "dst": _REQ,
                "op": _REQ,
                "data": _REQ,
                "bias": None,
                "scale": 1.0,
                "reduce_op": None,
                "reduce_res": None,
                "reduce_cmd": reduce_cmd.idle,
            },
        )
    else:
        d = _split(
            args,
            kwargs,
            {
                "op": _REQ,
                "data": _REQ,
                "bias": None,
                "scale": 1.0,
                "reduce_op": None,
                "reduce_res": None,
                "reduce_cmd": reduce_cmd.idle,
                "mask": None,
                "dtype": None,
            },
        )
    return _activation(d, d.get("reduce_cmd", reduce_cmd.idle))


def activation_reduce(*args, **kwargs):
    new = _new_style(args, kwargs, False)
    if new:
        d = _split(
            args,
            kwargs,
            {"dst": _REQ, "op": _REQ, "data": _REQ, "reduce_op": _REQ, "reduce_res": _REQ, "bias": None, "scale": 1.0},
        )
    else:
        d = _split(
            args,
            kwargs,
            {
                "op": _REQ,
                "data": _REQ,
                "reduce_op": _REQ,
                "reduce_res": _REQ,
                "bias": None,
                "scale": 1.0,
                "mask": None,
                "dtype": None,
            },
        )
    return _activation(d, reduce_cmd.reset_reduce)


def _activation(d, cmd):
    _need(d, "op", "data")
    data = as_tile(d["data"], "activation data")
    fn = _unary_fn(d["op"], "activation")
    scale, bias = d.get("scale", 1.0), d.get("bias")
    srcs = [data] + ([scale] if isinstance(scale, Tile) else []) + ([bias] if isinstance(bias, Tile) else [])
    s_tile, b_tile = isinstance(scale, Tile), isinstance(bias, Tile)

    def compute(a, *rest):
        rest = list(rest)
        s = rest.pop(0) if s_tile else scale
        b = rest.pop(0) if b_tile else bias
        x = f32(a)
        if not (isinstance(s, (int, float)) and s == 1.0):
            x = x * (f32(s) if isinstance(s, torch.Tensor) else float(s))
        if b is not None:
            x = x + (f32(b) if isinstance(b, torch.Tensor) else float(b))
        return fn(x)

    out = emit(
        "activation",
        "scalar",
        compute,
        srcs,
        dst=d.get("dst"),
        shape=data.shape,
        dtype=_out_dtype(d, data),
        mask=d.get("mask"),
    )
    res = d.get("reduce_res")
    if res is not None and cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce):
        if d.get("reduce_op") not in (None,) and _REDUCE.get(_name(d["reduce_op"])) != "sum":
            raise NKIUnsupported(f"activation reduce_op {d['reduce_op']!r}: only nl.add is supported")
        axes = list(range(1, out.ndim))
        emit(
            "activation_reduce",
            "scalar",
            lambda a: f32(a).sum(dim=axes, keepdim=True).reshape((a.shape[0],) + tuple(res.shape[1:])),
            [out],
            dst=res,
            accumulate=cmd == reduce_cmd.reduce,
            keep_src_shapes="partition",
        )
    elif res is not None and cmd == reduce_cmd.reset:
        nl._fill(res, 0.0)
    return out


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NKIUnsupported(f"nki.isa.{name} is not supported by the NKI emulator yet (docs/nki.md lists what is)")
