"""The vocabulary of nki.isa calls: engine and mode enums, ops by name (nl or
NumPy functions), and binding the arguments of either of AWS's call styles."""

from __future__ import annotations

import torch

from . import dtypes as _dt
from . import language as nl
from . import trace as _tracing
from .errors import NKIError
from .tile import Tile


class engine:  # noqa: N801
    unknown, tensor, scalar, gpsimd, dma, vector, sync = 0, 1, 2, 3, 4, 5, 6


tensor_engine, scalar_engine, gpsimd_engine, vector_engine, unknown_engine = (
    engine.tensor,
    engine.scalar,
    engine.gpsimd,
    engine.vector,
    engine.unknown,
)


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

_ENGINE_NAMES = {
    engine.tensor: "tensor",
    engine.scalar: "scalar",
    engine.gpsimd: "gpsimd",
    engine.vector: "vector",
    engine.dma: "dma",
}


def get_nc_version():
    tr = _tracing.current()
    target = tr.target if tr is not None else "trn2"
    return {"trn1": nc_version.gen2, "trn2": nc_version.gen3, "trn3": nc_version.gen4}[target]


# ---------------------------------------------------------------- ops by name
_BINARY = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "true_divide": torch.div,
    "maximum": torch.maximum,
    "max": torch.maximum,
    "amax": torch.maximum,
    "minimum": torch.minimum,
    "min": torch.minimum,
    "amin": torch.minimum,
    "power": torch.pow,
    "fmod": torch.fmod,
    "mod": torch.remainder,
    "equal": torch.eq,
    "not_equal": torch.ne,
    "greater": torch.gt,
    "greater_equal": torch.ge,
    "less": torch.lt,
    "less_equal": torch.le,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "left_shift": torch.bitwise_left_shift,
    "right_shift": torch.bitwise_right_shift,
    "abs_max": lambda a, b: torch.maximum(torch.abs(a), torch.abs(b)),
    "abs_min": lambda a, b: torch.minimum(torch.abs(a), torch.abs(b)),
}
_REDUCE = {
    "add": "sum",
    "sum": "sum",
    "maximum": "amax",
    "max": "amax",
    "amax": "amax",
    "minimum": "amin",
    "min": "amin",
    "amin": "amin",
    "multiply": "prod",
    "prod": "prod",
}
_UNARY = {
    "exp": torch.exp,
    "log": torch.log,
    "tanh": torch.tanh,
    "square": torch.square,
    "copy": lambda a: a,
    "identity": lambda a: a,
    "bypass": lambda a: a,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "negative": torch.neg,
    "abs": torch.abs,
    "absolute": torch.abs,
    "sign": torch.sign,
    "sin": torch.sin,
    "cos": torch.cos,
    "arctan": torch.atan,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "invert": torch.bitwise_not,
}


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
        return lambda a, axes: (
            a.flatten(axes[0], axes[-1])
            .prod(dim=axes[0], keepdim=True)
            .reshape([1 if i in axes else s for i, s in enumerate(a.shape)])
        )
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
