"""`nl` elementwise math, activations and reductions (part of nki.language):
each op computes in fp32 on whole tiles and rounds once to its dtype. Binary
ops run on the Vector engine, activations on the Scalar engine."""

import math

import torch

from . import dtypes as _dt
from . import trace as _tracing
from .emit import as_tile, emit, f32
from .emit import check_on_chip as _check_on_chip
from .errors import NKIError
from .indexing import IndexExpr
from .tile import Tile

__all__ = []  # filled below: every public op


def _binary(name, fn, engine="vector", out_bool=False, direct=False):
    def op(x, y, dtype=None, mask=None, dst=None, **kwargs):
        tiles = [a for a in (x, y) if isinstance(a, Tile)]
        if not tiles:
            raise NKIError(f"nl.{name} needs at least one tile operand")
        for t in tiles:
            _check_on_chip(t, f"nl.{name}")
        if dtype is not None:
            out = _dt.to_torch(dtype)
        elif out_bool:
            out = tiles[0].dtype if len(tiles) == 1 else _dt.promote(tiles[0].dtype, tiles[1].dtype)
        elif len(tiles) == 2:
            out = _dt.promote(x.dtype, y.dtype)
        else:
            other = y if tiles[0] is x else x
            out = _dt.promote(tiles[0].dtype, _dt.weak(other))
        return emit(
            name,
            engine,
            lambda a, b: fn(_t(a), _t(b)),
            [x, y],
            dtype=out,
            mask=mask,
            dst=dst,
            direct=fn if direct else None,
        )

    op.__name__ = name
    op.torch_fn = fn
    return op


def _t(x):
    """An operand as an fp32-computing tensor (scalars become 0-d tensors)."""
    return (
        f32(x)
        if isinstance(x, torch.Tensor)
        else torch.tensor(x, dtype=torch.float32 if isinstance(x, float) else None)
    )


def _cmp(fn):
    return lambda a, b: fn(a, b).to(torch.float32)


add = _binary("add", torch.add, direct=True)
subtract = _binary("subtract", torch.sub, direct=True)
multiply = _binary("multiply", torch.mul, direct=True)
divide = _binary("divide", torch.div, direct=True)
power = _binary("power", torch.pow)
maximum = _binary("maximum", torch.maximum, direct=True)
minimum = _binary("minimum", torch.minimum, direct=True)
fmod = _binary("fmod", torch.fmod)
equal = _binary("equal", _cmp(torch.eq), out_bool=True)
not_equal = _binary("not_equal", _cmp(torch.ne), out_bool=True)
greater = _binary("greater", _cmp(torch.gt), out_bool=True)
greater_equal = _binary("greater_equal", _cmp(torch.ge), out_bool=True)
less = _binary("less", _cmp(torch.lt), out_bool=True)
less_equal = _binary("less_equal", _cmp(torch.le), out_bool=True)
logical_and = _binary("logical_and", _cmp(torch.logical_and), out_bool=True)
logical_or = _binary("logical_or", _cmp(torch.logical_or), out_bool=True)
logical_xor = _binary("logical_xor", _cmp(torch.logical_xor), out_bool=True)


bitwise_and = _binary("bitwise_and", torch.bitwise_and)
bitwise_or = _binary("bitwise_or", torch.bitwise_or)
bitwise_xor = _binary("bitwise_xor", torch.bitwise_xor)
left_shift = _binary("left_shift", torch.bitwise_left_shift)
right_shift = _binary("right_shift", torch.bitwise_right_shift)


def _unary(name, fn, engine="scalar", direct=False):
    def op(x, dtype=None, mask=None, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        _check_on_chip(x, f"nl.{name}")
        out = _dt.to_torch(dtype) if dtype is not None else x.dtype
        return emit(
            name, engine, lambda a: fn(f32(a)), [x], dtype=out, mask=mask, dst=dst, direct=fn if direct else None
        )

    op.__name__ = name
    op.torch_fn = fn
    return op


def _gelu_tanh(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


exp = _unary("exp", torch.exp, direct=True)
log = _unary("log", torch.log, direct=True)
sqrt = _unary("sqrt", torch.sqrt, direct=True)
rsqrt = _unary("rsqrt", torch.rsqrt, direct=True)
reciprocal = _unary("reciprocal", torch.reciprocal, direct=True)
abs = _unary("abs", torch.abs, "vector")  # noqa: A001
negative = _unary("negative", torch.neg, "vector")
sign = _unary("sign", torch.sign)
square = _unary("square", torch.square, direct=True)
tanh = _unary("tanh", torch.tanh, direct=True)
sigmoid = _unary("sigmoid", torch.sigmoid, direct=True)
relu = _unary("relu", torch.relu)
gelu = _unary("gelu", torch.nn.functional.gelu)
gelu_apprx_tanh = _unary("gelu_apprx_tanh", _gelu_tanh)
silu = _unary("silu", torch.nn.functional.silu)
softplus = _unary("softplus", torch.nn.functional.softplus)
mish = _unary("mish", torch.nn.functional.mish)
sin = _unary("sin", torch.sin)
cos = _unary("cos", torch.cos)
tan = _unary("tan", torch.tan)
arctan = _unary("arctan", torch.atan)
erf = _unary("erf", torch.erf)
ceil = _unary("ceil", torch.ceil, "vector")
floor = _unary("floor", torch.floor, "vector")
trunc = _unary("trunc", torch.trunc, "vector")
logical_not = _unary("logical_not", lambda a: torch.logical_not(a).to(torch.float32), "vector")
invert = bitwise_not = _unary("invert", torch.bitwise_not, "vector")
identity = _unary("identity", lambda a: a)


def where(condition, x, y, dtype=None, mask=None, **kwargs) -> Tile:
    tiles = [t for t in (condition, x, y) if isinstance(t, Tile)]
    if isinstance(condition, IndexExpr):
        condition = condition.t  # an index predicate: a constant mask
        if not tiles:
            raise NKIError("nl.where needs a tile operand")
    out = _dt.to_torch(dtype) if dtype is not None else (x.dtype if isinstance(x, Tile) else y.dtype)

    def fn(c, a, b):
        return torch.where(torch.as_tensor(c).bool(), torch.as_tensor(f32(a)), torch.as_tensor(f32(b)))

    return emit("where", "vector", fn, [condition, x, y], dtype=out, mask=mask)


# ---------------------------------------------------------------- reductions
def _axes(x: Tile, axis, name):
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = [a % x.ndim for a in axes]
    if 0 in axes:
        tr = _tracing.require(f"nl.{name}")
        raise tr.error(
            f"nl.{name}: reducing along the partition axis (axis 0) of {list(x.shape)} is not "
            f"supported by the engines; transpose the tile (nl.transpose) or reduce with a matmul"
        )
    return sorted(axes)


def _reduction(name, fn):
    def op(x, axis, dtype=None, mask=None, keepdims=False, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        _check_on_chip(x, f"nl.{name}")
        axes = _axes(x, axis, name)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        if not keepdims:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        out = _dt.to_torch(dtype) if dtype is not None else x.dtype

        def compute(a):
            r = fn(f32(a), axes)
            return r if keepdims else r.reshape([s for i, s in enumerate(a.shape) if i not in axes])

        return emit(
            name,
            "vector",
            compute,
            [x],
            shape=shape,
            dtype=out,
            mask=mask,
            dst=dst,
            keep_src_shapes="partition",
            cost={"elements": math.prod(x.shape)},
        )

    op.__name__ = name
    return op


sum = _reduction("sum", lambda a, ax: a.sum(dim=ax, keepdim=True))  # noqa: A001
prod = _reduction(
    "prod",
    lambda a, ax: (
        a.reshape(*a.shape).prod(dim=ax[0], keepdim=True)
        if len(ax) == 1
        else a.flatten(ax[0], ax[-1])
        .prod(dim=ax[0], keepdim=True)
        .reshape([1 if i in ax else s for i, s in enumerate(a.shape)])
    ),
)
max = _reduction("max", lambda a, ax: a.amax(dim=ax, keepdim=True))  # noqa: A001
min = _reduction("min", lambda a, ax: a.amin(dim=ax, keepdim=True))  # noqa: A001
mean = _reduction("mean", lambda a, ax: a.mean(dim=ax, keepdim=True))
var = _reduction("var", lambda a, ax: a.var(dim=ax, keepdim=True, unbiased=False))
all = _reduction(
    "all",
    lambda a, ax: (
        a.bool().all(dim=ax[0], keepdim=True).to(torch.float32)  # noqa: A001
        if len(ax) == 1
        else a.bool().flatten(ax[0], ax[-1]).all(dim=ax[0], keepdim=True).float()
    ),
)


def softmax(x, axis, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.softmax operand")
    _check_on_chip(x, "nl.softmax")
    axes = _axes(x, axis, "softmax")
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a):
        a = f32(a)
        e = torch.exp(a - a.amax(dim=axes, keepdim=True))
        return e / e.sum(dim=axes, keepdim=True)

    return emit("softmax", "scalar", fn, [x], dtype=out, mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.rms_norm operand")
    _check_on_chip(x, "nl.rms_norm")
    axes = _axes(x, axis, "rms_norm")
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a, weight):
        a = f32(a)
        return a * torch.rsqrt(a.square().sum(dim=axes, keepdim=True) / n + epsilon) * f32(weight)

    return emit("rms_norm", "vector", fn, [x, w], dtype=out, mask=mask)


__all__ = [
    n
    for n, v in list(globals().items())
    if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__
]
