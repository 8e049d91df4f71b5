"""`nl` elementwise ops of two tiles (or a tile and a scalar) and `nl.where`:
each computes in fp32 on whole tiles and rounds once to its dtype, on the
Vector engine. The dtype of a result follows NKI's promotion (chip/dtypes.py);
comparisons and logical ops give 0/1 in the operands' dtype."""

import torch

from ..chip import dtypes
from ..errors import NKIError
from ..trace.emit import emit
from ..trace.indexing import IndexExpr
from ..trace.operands import check_on_chip, f32
from ..trace.tile import Tile


def _binary(name, fn, engine="vector", out_bool=False, direct=False):
    def op(x, y, dtype=None, mask=None, dst=None, **kwargs):
        tiles = [a for a in (x, y) if isinstance(a, Tile)]
        if not tiles:
            raise NKIError(f"nl.{name} needs at least one tile operand")
        for t in tiles:
            check_on_chip(t, f"nl.{name}")
        if dtype is not None:
            out = dtypes.to_torch(dtype)
        elif out_bool:
            out = tiles[0].dtype if len(tiles) == 1 else dtypes.promote(tiles[0].dtype, tiles[1].dtype)
        elif len(tiles) == 2:
            out = dtypes.promote(x.dtype, y.dtype)
        else:
            other = y if tiles[0] is x else x
            out = dtypes.promote(tiles[0].dtype, dtypes.weak(other))
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


def where(condition, x, y, dtype=None, mask=None, **kwargs) -> Tile:
    tiles = [t for t in (condition, x, y) if isinstance(t, Tile)]
    if isinstance(condition, IndexExpr):
        condition = condition.t  # an index predicate: a constant mask
        if not tiles:
            raise NKIError("nl.where needs a tile operand")
    out = dtypes.to_torch(dtype) if dtype is not None else (x.dtype if isinstance(x, Tile) else y.dtype)

    def fn(c, a, b):
        return torch.where(torch.as_tensor(c).bool(), torch.as_tensor(f32(a)), torch.as_tensor(f32(b)))

    return emit("where", "vector", fn, [condition, x, y], dtype=out, mask=mask)
