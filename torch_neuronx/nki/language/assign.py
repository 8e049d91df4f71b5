"""Assignment to a tile: `tile[key] = value` and `tile <op>= value`
(Tile's `__setitem__` and in-place operators call these, operators.py).

`t[...] = v` records the instruction its operands call for: a fill for a
scalar, a store into HBM, a load from HBM, else a copy; when `v` is the fresh
result of the instruction just recorded (`t[...] = nl.load(...)`,
`t[...] = nl.exp(x)`), that instruction writes `t` instead and no copy is
recorded. `t += v` is an accumulation (allowed across affine_range
iterations: PSUM accumulation of matmuls), `-=`, `*=` and `/=` are the
elementwise ops with `t` as their destination."""

from ..isa.fill import fill
from ..trace import state
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip, f32, is_scalar
from ..trace.tile import Tile
from .elementwise import add, divide, multiply, subtract
from .movement import load, store

_INPLACE = {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide}


def assign(target: Tile, value):
    """`target[...] = value`."""
    tr = state.require("tile assignment")
    if is_scalar(value):
        fill(target, value.item() if hasattr(value, "item") else value)
        return
    value = as_tile(value, "assigned value")
    if (
        value.updated is not None
        and tr.instrs
        and tr.instrs[-1] is value.updated
        and value.access.buffer is target.access.buffer
        and value.shape == target.shape
    ):
        value.updated = None  # `t[idx] += x` just wrote t[idx]; Python's store-back is no instruction
        return
    tkind, vkind = target.access.buffer.kind, value.access.buffer.kind
    if not tkind.on_chip:
        store(target, value)
        return
    if not vkind.on_chip:
        target_t = load(value, dtype=target.dtype)
        value = target_t
    prod = value.producer
    if (
        prod is not None
        and not value.used
        and tr.instrs
        and tr.instrs[-1] is prod
        and tkind is vkind
        and _same_tile_shape(target.shape, value.shape)
    ):
        tr.retarget(prod, value.access.buffer, target.access)
        value.used = True
        return
    emit("copy", "vector", lambda x: x, [value], dst=target)


def _same_tile_shape(a, b) -> bool:
    """Equal shapes, counting a lower-rank tile as padded with trailing 1s ((P,) is (P, 1))."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    return a + (1,) * (n - len(a)) == b + (1,) * (n - len(b))


def inplace(name, target: Tile, value):
    """`target += value` (and -=, *=, /=: `name` is the op's nl name). `+=` is an
    accumulation: allowed across affine_range iterations (PSUM accumulation of matmuls)."""
    tr = state.require("in-place tile update")
    _inplace_op(tr, name, target, value)
    target.updated = tr.instrs[-1] if tr.instrs else None


def _inplace_op(tr, name, target: Tile, value):
    check_on_chip(target, f"tile {name}")
    if name == "add" and isinstance(value, Tile):
        prod = value.producer
        if (
            prod is not None
            and not value.used
            and tr.instrs
            and tr.instrs[-1] is prod
            and target.access.buffer.kind is value.access.buffer.kind
            and _same_tile_shape(target.shape, value.shape)
        ):
            tr.retarget(prod, value.access.buffer, target.access, accumulate=True)
            value.used = True
            return
        emit("add", "vector", lambda x: f32(x), [value], dst=target, accumulate=True)
        return
    _INPLACE[name](target, value, dst=target)
