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
from .emit import as_tile, emit, f32, new_tile
from .errors import NKIError, NKIUnsupported
from .indexing import IndexExpr
from .tile import Tile
from .trace import PSUM, SBUF


class engine:  # noqa: N801
    unknown, tensor, scalar, gpsimd, dma, vector, sync = 0, 1, 2, 3, 4, 5, 6


tensor_engine, scalar_engine, gpsimd_engine, vector_engine, unknown_engine = (
    engine.tensor, engine.scalar, engine.gpsimd, engine.vector, engine.unknown)


class reduce_cmd:  # noqa: N801
    idle, reset, reduce, reset_reduce, load_reduce = 0, 1, 2, 3, 4


class dge_mode:  # noqa: N801
    none, swdge, hwdge, unknown = 0, 1, 2, 3


class oob_mode:  # noqa: N801
    error, skip = 0, 1


class nc_version:  # noqa: N801
    gen2, gen3, gen4 = 2, 3, 4


class matmul_perf_mode:  # noqa: N801
    none, double_row = "none", "double_row"


NkiValidationError = NKIError
fp32 = nl.fp32

_ENGINE_NAMES = {engine.tensor: "tensor", engine.scalar: "scalar", engine.gpsimd: "gpsimd",
                 engine.vector: "vector", engine.dma: "dma"}


def get_nc_version():
    tr = _tracing.current()
    target = tr.target if tr is not None else "trn2"
    return {"trn1": nc_version.gen2, "trn2": nc_version.gen3, "trn3": nc_version.gen4}[target]


# ---------------------------------------------------------------- ops by name
_BINARY = {
    "add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div, "true_divide": torch.div,
    "maximum": torch.maximum, "max": torch.maximum, "amax": torch.maximum, "minimum": torch.minimum,
    "min": torch.minimum, "amin": torch.minimum, "power": torch.pow, "fmod": torch.fmod, "mod": torch.remainder,
    "equal": torch.eq, "not_equal": torch.ne, "greater": torch.gt, "greater_equal": torch.ge, "less": torch.lt,
    "less_equal": torch.le, "logical_and": torch.logical_and, "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor, "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor, "left_shift": torch.bitwise_left_shift,
    "right_shift": torch.bitwise_right_shift,
    "abs_max": lambda a, b: torch.maximum(torch.abs(a), torch.abs(b)),
    "abs_min": lambda a, b: torch.minimum(torch.abs(a), torch.abs(b)),
}
_REDUCE = {"add": "sum", "sum": "sum", "maximum": "amax", "max": "amax", "amax": "amax", "minimum": "amin",
           "min": "amin", "amin": "amin", "multiply": "prod", "prod": "prod"}
_UNARY = {"exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "square": torch.square, "copy": lambda a: a,
          "identity": lambda a: a, "bypass": lambda a: a, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
          "reciprocal": torch.reciprocal, "negative": torch.neg, "abs": torch.abs, "absolute": torch.abs,
          "sign": torch.sign, "sin": torch.sin, "cos": torch.cos, "arctan": torch.atan, "relu": torch.relu,
          "sigmoid": torch.sigmoid, "erf": torch.erf, "invert": torch.bitwise_not}


def _name(op) -> str:
    return getattr(op, "__name__", None) or str(op)


def _binary_fn(op, what):
    fn = getattr(op, "torch_fn", None)
    if fn is not None and _name(op) in _BINARY:
        return _BINARY[_name(op)]
    if _name(op) in _BINARY:
        return _BINARY[_name(op)]
    raise NKIError(f"nisa.{what}: {op!r} is not a binary ALU op (nl.add, nl.multiply, nl.maximum, np.add, ...)")


def _unary_fn(op, what):
    fn = getattr(op, "torch_fn", None)
    if fn is not None:
        return fn
    if _name(op) in _UNARY:
        return _UNARY[_name(op)]
    raise NKIError(f"nisa.{what}: {op!r} is not an activation function (nl.exp, nl.tanh, nl.copy, np.exp, ...)")


def _reduce_fn(op, what):
    name = _REDUCE.get(_name(op))
    if name is None:
        raise NKIError(f"nisa.{what}: {op!r} is not a reduce op (nl.add, nl.max, nl.min, np.add, np.max, ...)")
    if name == "prod":
        return lambda a, axes: a.flatten(axes[0], axes[-1]).prod(dim=axes[0], keepdim=True).reshape(
            [1 if i in axes else s for i, s in enumerate(a.shape)])
    return lambda a, axes: getattr(a, name)(dim=axes, keepdim=True)


def _new_style(args, kwargs, legacy_first_is_tile: bool, ntiles_new: int = 1) -> bool:
    if "dst" in kwargs:
        return True
    tiles = 0
    for a in args:
        if isinstance(a, Tile):
            tiles += 1
        else:
            break
    if legacy_first_is_tile:
        return tiles > ntiles_new
    return tiles >= 1


def _split(args, kwargs, names):
    """Binds positional and keyword arguments to `names` (a dict of name ->
    default, in order), rejecting unknown ones."""
    out = dict(names)
    for n, a in zip(names, args):
        out[n] = a
    if len(args) > len(names):
        raise NKIError(f"too many positional arguments ({len(args)}); expected {list(names)}")
    for k, v in kwargs.items():
        if k not in out and k not in ("name", "mask", "engine", "dtype"):
            continue  # options this emulator does not model (priority, dge_mode, ...)
        out[k] = v
    return out


_REQ = object()


def _need(d, *names):
    for n in names:
        if d.get(n) is _REQ:
            raise NKIError(f"missing argument {n!r}")


def _engine(e, default):
    return _ENGINE_NAMES.get(e, default) if e not in (None, engine.unknown) else default


def _out_dtype(d, data):
    if d.get("dst") is not None:
        return None
    return _dt.to_torch(d["dtype"]) if d.get("dtype") is not None else data.dtype


# ---------------------------------------------------------------- Tensor engine
def nc_matmul(*args, **kwargs):
    """stationary.T @ moving into PSUM (fp32 accumulation)."""
    if _new_style(args, kwargs, True, 2):
        d = _split(args, kwargs, {"dst": _REQ, "stationary": _REQ, "moving": _REQ, "is_stationary_onezero": False,
                                  "is_moving_onezero": False, "is_transpose": False, "accumulate": None,
                                  "tile_position": (), "tile_size": (), "perf_mode": None})
    else:
        d = _split(args, kwargs, {"stationary": _REQ, "moving": _REQ, "is_stationary_onezero": False,
                                  "is_moving_onezero": False, "is_transpose": False, "tile_position": (),
                                  "tile_size": (), "mask": None})
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
        acc = not bool(dst.access.gather(dst.access.buffer.poison).all()) if dst.access.buffer.poison is not None else False
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
    return emit("nc_transpose", eng, lambda a: a.reshape(a.shape[0], -1).t(), [data], dst=dst, shape=(f, p),
                dtype=dtype, kind=kind, keep_src_shapes=True,
                poison_rule=lambda ps: ps[0].reshape(p, -1).t(), cost={"k": p, "m": p, "n": f, "in_dtype": data.dtype})


# ---------------------------------------------------------------- Scalar engine
def activation(*args, **kwargs):
    """op(data * scale + bias), with an optional sum along the free axes into reduce_res."""
    new = _new_style(args, kwargs, False)
    if new:
        d = _split(args, kwargs, {"dst": _REQ, "op": _REQ, "data": _REQ, "bias": None, "scale": 1.0,
                                  "reduce_op": None, "reduce_res": None, "reduce_cmd": reduce_cmd.idle})
    else:
        d = _split(args, kwargs, {"op": _REQ, "data": _REQ, "bias": None, "scale": 1.0, "reduce_op": None,
                                  "reduce_res": None, "reduce_cmd": reduce_cmd.idle, "mask": None, "dtype": None})
    return _activation(d, d.get("reduce_cmd", reduce_cmd.idle))


def activation_reduce(*args, **kwargs):
    new = _new_style(args, kwargs, False)
    if new:
        d = _split(args, kwargs, {"dst": _REQ, "op": _REQ, "data": _REQ, "reduce_op": _REQ, "reduce_res": _REQ,
                                  "bias": None, "scale": 1.0})
    else:
        d = _split(args, kwargs, {"op": _REQ, "data": _REQ, "reduce_op": _REQ, "reduce_res": _REQ, "bias": None,
                                  "scale": 1.0, "mask": None, "dtype": None})
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
    out = emit("activation", "scalar", compute, srcs, dst=d.get("dst"), shape=data.shape, dtype=_out_dtype(d, data),
               mask=d.get("mask"))
    res = d.get("reduce_res")
    if res is not None and cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce):
        if d.get("reduce_op") not in (None,) and _REDUCE.get(_name(d["reduce_op"])) != "sum":
            raise NKIUnsupported(f"activation reduce_op {d['reduce_op']!r}: only nl.add is supported")
        axes = list(range(1, out.ndim))
        emit("activation_reduce", "scalar", lambda a: f32(a).sum(dim=axes, keepdim=True).reshape((a.shape[0],) + tuple(res.shape[1:])),
             [out], dst=res, accumulate=cmd == reduce_cmd.reduce, keep_src_shapes="partition")
    elif res is not None and cmd == reduce_cmd.reset:
        nl._fill(res, 0.0)
    return out


# ---------------------------------------------------------------- Vector engine
def tensor_tensor(*args, **kwargs):
    """data1 <op> data2, elementwise."""
    if _new_style(args, kwargs, True, 2):
        d = _split(args, kwargs, {"dst": _REQ, "data1": _REQ, "data2": _REQ, "op": _REQ, "engine": engine.unknown})
    else:
        d = _split(args, kwargs, {"data1": _REQ, "data2": _REQ, "op": _REQ, "dtype": None, "mask": None,
                                  "engine": engine.unknown})
    _need(d, "data1", "data2", "op")
    a, b = as_tile(d["data1"], "tensor_tensor data1"), as_tile(d["data2"], "tensor_tensor data2")
    tr = _tracing.require("nisa.tensor_tensor")
    if a.shape[0] != b.shape[0]:
        raise tr.error(f"number of partitions mismatch in tensor_tensor: data1{list(a.shape)}, data2{list(b.shape)}")
    if a.access.buffer.kind is PSUM and b.access.buffer.kind is PSUM:
        raise tr.error("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM")
    fn = _binary_fn(d["op"], "tensor_tensor")
    dtype = None if d.get("dst") is not None else (
        _dt.to_torch(d["dtype"]) if d.get("dtype") else _dt.promote(a.dtype, b.dtype))
    eng = "gpsimd" if _name(d["op"]) == "power" else _engine(d.get("engine"), "vector")
    return emit("tensor_tensor", eng, lambda x, y: fn(f32(x), f32(y)), [a, b], dst=d.get("dst"), dtype=dtype,
                mask=d.get("mask"))


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
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ, "op0": _REQ, "operand0": None, "reverse0": False,
                                  "op1": None, "operand1": None, "reverse1": False, "engine": engine.unknown})
    else:
        d = _split(args, kwargs, {"data": _REQ, "op0": _REQ, "operand0": None, "reverse0": False, "op1": None,
                                  "operand1": None, "reverse1": False, "dtype": None, "mask": None,
                                  "engine": engine.unknown})
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
    return emit("tensor_scalar", _engine(d.get("engine"), "vector"), compute, srcs, dst=d.get("dst"),
                shape=data.shape, dtype=_out_dtype(d, data), mask=d.get("mask"))


def scalar_tensor_tensor(*args, **kwargs):
    """(data <op0> operand0) <op1> operand1, operand1 a tile like data."""
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ, "op0": _REQ, "operand0": _REQ, "op1": _REQ,
                                  "operand1": _REQ, "reverse0": False, "reverse1": False})
    else:
        d = _split(args, kwargs, {"data": _REQ, "op0": _REQ, "operand0": _REQ, "op1": _REQ, "operand1": _REQ,
                                  "reverse0": False, "reverse1": False, "dtype": None, "mask": None})
    _need(d, "data", "op0", "operand0", "op1", "operand1")
    data, o1 = as_tile(d["data"]), as_tile(d["operand1"])
    o0 = _scalar_operand(d["operand0"])
    srcs = [data, o1] + ([o0] if isinstance(o0, Tile) else [])

    def compute(x, y, *rest):
        a0 = rest[0] if rest else o0
        r = _apply(d["op0"], f32(x), a0, d["reverse0"], "scalar_tensor_tensor")
        return _apply(d["op1"], r, f32(y), d["reverse1"], "scalar_tensor_tensor")
    return emit("scalar_tensor_tensor", "vector", compute, srcs, dst=d.get("dst"), shape=data.shape,
                dtype=_out_dtype(d, data), mask=d.get("mask"))


def tensor_reduce(*args, **kwargs):
    """Reduces the free axes `axis` of data with op (negate: times -1)."""
    if _new_style(args, kwargs, False):
        d = _split(args, kwargs, {"dst": _REQ, "op": _REQ, "data": _REQ, "axis": _REQ, "negate": False,
                                  "keepdims": False})
    else:
        d = _split(args, kwargs, {"op": _REQ, "data": _REQ, "axis": _REQ, "mask": None, "dtype": None,
                                  "negate": False, "keepdims": False})
    _need(d, "op", "data", "axis")
    data = as_tile(d["data"], "tensor_reduce data")
    axes = nl._axes(data, d["axis"], "tensor_reduce")
    fn = _reduce_fn(d["op"], "tensor_reduce")
    keep = d.get("keepdims", False)
    shape = tuple(1 if i in axes else s for i, s in enumerate(data.shape)) if keep else tuple(
        s for i, s in enumerate(data.shape) if i not in axes)
    dst = d.get("dst")
    if dst is not None and tuple(dst.shape) != shape:
        shape = tuple(dst.shape)
    sign = -1.0 if d.get("negate") else 1.0

    def compute(a):
        r = fn(f32(a), axes)
        r = r * sign if sign != 1.0 else r
        return r.reshape((a.shape[0],) + tuple(shape[1:]))
    return emit("tensor_reduce", "vector", compute, [data], dst=dst, shape=shape, dtype=_out_dtype(d, data),
                mask=d.get("mask"), keep_src_shapes="partition")


def tensor_copy(*args, **kwargs):
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ, "engine": engine.unknown})
    else:
        d = _split(args, kwargs, {"src": _REQ, "mask": None, "dtype": None, "engine": engine.unknown})
    src = as_tile(d["src"], "tensor_copy src")
    nl._check_on_chip(src, "nisa.tensor_copy")
    dst = d.get("dst")
    fn = (lambda a: a.reshape(dst.shape)) if dst is not None and tuple(dst.shape) != tuple(src.shape) else (lambda a: a)
    return emit("tensor_copy", _engine(d.get("engine"), "vector"), fn, [src], dst=dst,
                shape=None if dst is not None else src.shape, dtype=_out_dtype(d, src), mask=d.get("mask"),
                keep_src_shapes=dst is not None and tuple(dst.shape) != tuple(src.shape))


def reciprocal(*args, **kwargs):
    if _new_style(args, kwargs, True, 1):
        d = _split(args, kwargs, {"dst": _REQ, "data": _REQ})
    else:
        d = _split(args, kwargs, {"data": _REQ, "dtype": None, "mask": None})
    data = as_tile(d["data"])
    return emit("reciprocal", "vector", lambda a: torch.reciprocal(f32(a)), [data], dst=d.get("dst"),
                dtype=_out_dtype(d, data), mask=d.get("mask"))


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
        raise tr.error(f"nisa.bn_stats: {f} free elements per partition in {list(data.shape)} exceed "
                       f"bn_stats_fmax = {tr.limits.bn_stats_fmax}; split the row and combine with bn_aggr")

    def compute(a):
        a = f32(a).reshape(a.shape[0], -1)
        cols = []
        for part in (a[:, 0::2], a[:, 1::2]):
            n = part.shape[1]
            mean = part.mean(dim=1) if n else torch.zeros(a.shape[0])
            m2 = ((part - mean[:, None]) ** 2).sum(dim=1) if n else torch.zeros(a.shape[0])
            cols += [torch.full((a.shape[0],), float(n)), mean, m2]
        return torch.stack(cols, dim=1)
    return emit("bn_stats", "vector", compute, [data], dst=d.get("dst"), shape=(data.shape[0], 6),
                dtype=_out_dtype(d, data) if d.get("dst") is None else None, mask=d.get("mask"),
                keep_src_shapes="partition", cost={"elements": data.shape[0] * f})


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
    return emit("bn_aggr", "vector", compute, [data], dst=d.get("dst"), shape=(data.shape[0], 2),
                dtype=_out_dtype(d, data) if d.get("dst") is None else None, mask=d.get("mask"),
                keep_src_shapes="partition")


# ---------------------------------------------------------------- GpSimd / fills
def iota(*args, **kwargs):
    """Writes index values: legacy iota(expr, dtype) with an nl.arange expression;
    new iota(dst, pattern, offset=0, channel_multiplier=0)."""
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = _split(args, kwargs, {"dst": _REQ, "pattern": _REQ, "offset": 0, "channel_multiplier": 0})
        dst = as_tile(d["dst"])
        p = dst.shape[0]
        values = torch.full((p,), int(d["offset"]), dtype=torch.int64)[:, None] + \
            int(d["channel_multiplier"]) * torch.arange(p)[:, None]
        free = torch.zeros((1,), dtype=torch.int64)
        for step, num in d["pattern"]:
            free = (free[..., None] + int(step) * torch.arange(int(num))).reshape(-1)
        values = (values + free[None, :]).reshape(dst.shape)
        const = values
        return emit("iota", "gpsimd", lambda: const, [], dst=dst,
                    make_step=lambda rd, wr, acc: (lambda env: wr[0].put(env, const)))
    d = _split(args, kwargs, {"expr": _REQ, "dtype": _REQ, "mask": None})
    expr = d["expr"]
    if not isinstance(expr, IndexExpr):
        raise NKIError("nisa.iota(expr, dtype): expr must be an expression of nl.arange, e.g. nl.arange(128)[:, None]")
    const = expr.t
    return emit("iota", "gpsimd", None, [], shape=tuple(const.shape), dtype=_dt.to_torch(d["dtype"]),
                mask=d.get("mask"), make_step=lambda rd, wr, acc: (lambda env: wr[0].put(env, const)))


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
        d = _split(args, kwargs, {"dst": _REQ, "pattern": _REQ, "channel_multiplier": _REQ, "on_true_tile": _REQ,
                                  "on_false_value": _REQ, "cmp_op": None, "offset": 0})
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
        d = _split(args, kwargs, {"pred": _REQ, "on_true_tile": _REQ, "on_false_value": _REQ, "mask": None,
                                  "dtype": None})
        pred = d["pred"].t if isinstance(d["pred"], IndexExpr) else torch.as_tensor(d["pred"])
        on_true = as_tile(d["on_true_tile"])
        dst_tile = None
    false_value = float(d["on_false_value"])
    p = pred.bool()
    return emit("affine_select", "gpsimd", lambda a: torch.where(p.expand(a.shape), f32(a), false_value), [on_true],
                dst=dst_tile, dtype=None if dst_tile is not None else (
                    _dt.to_torch(d["dtype"]) if d.get("dtype") else on_true.dtype), mask=d.get("mask"))


def max8(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ})
    else:
        d = _split(args, kwargs, {"src": _REQ, "mask": None, "dtype": None})
    src = as_tile(d["src"], "max8 src")
    return emit("max8", "vector", lambda a: f32(a).reshape(a.shape[0], -1).topk(8, dim=1).values, [src],
                dst=d.get("dst"), shape=(src.shape[0], 8), dtype=_out_dtype(d, src), keep_src_shapes="partition")


# ---------------------------------------------------------------- DMA
def dma_copy(*args, **kwargs):
    """Copies src to dst (HBM <-> SBUF, or SBUF -> SBUF); dst_rmw_op=np.add accumulates."""
    d = _split(args, kwargs, {"dst": _REQ, "src": _REQ, "mask": None, "dst_rmw_op": None,
                              "oob_mode": oob_mode.error, "dge_mode": dge_mode.unknown})
    _need(d, "dst", "src")
    dst, src = as_tile(d["dst"], "dma_copy dst"), as_tile(d["src"], "dma_copy src")
    tr = _tracing.require("nisa.dma_copy")
    if src.access.buffer.kind is PSUM or dst.access.buffer.kind is PSUM:
        raise tr.error("nisa.dma_copy moves data between HBM and SBUF; PSUM is not reachable by DMA "
                       "(copy PSUM to SBUF with nisa.tensor_copy first)")
    if math.prod(src.shape) != math.prod(dst.shape):
        raise tr.error(f"nisa.dma_copy: element counts differ: src {list(src.shape)}, dst {list(dst.shape)}")
    fn = (lambda a: a) if tuple(src.shape) == tuple(dst.shape) else (lambda a: a.reshape(dst.shape))
    rmw = d.get("dst_rmw_op")
    if rmw is not None and _name(rmw) != "add":
        raise NKIUnsupported(f"nisa.dma_copy(dst_rmw_op={rmw!r}): only np.add / nl.add is supported")
    emit("dma_copy", "dma", (lambda a: f32(fn(a))) if rmw is not None else fn, [src], dst=dst,
         mask=d.get("mask"), accumulate=rmw is not None,
         keep_src_shapes=tuple(src.shape) != tuple(dst.shape),
         cost={"bytes": math.prod(src.shape) * max(src.dtype.itemsize, dst.dtype.itemsize)})
    return dst


def dma_transpose(*args, **kwargs):
    if "dst" in kwargs or (len(args) >= 2 and isinstance(args[1], Tile)):
        d = _split(args, kwargs, {"dst": _REQ, "src": _REQ, "axes": None})
    else:
        d = _split(args, kwargs, {"src": _REQ, "axes": None, "mask": None, "dtype": None})
    src = as_tile(d["src"], "dma_transpose src")
    axes = tuple(d.get("axes") or tuple(reversed(range(src.ndim))))
    shape = tuple(src.shape[a] for a in axes)
    return emit("dma_transpose", "dma", lambda a: a.permute(axes), [src], dst=d.get("dst"), shape=shape,
                dtype=_out_dtype(d, src), keep_src_shapes=True,
                poison_rule=lambda ps: ps[0].permute(axes),
                cost={"bytes": math.prod(src.shape) * src.dtype.itemsize})


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NKIUnsupported(f"nki.isa.{name} is not supported by the NKI emulator yet (docs/nki.md lists what is)")
