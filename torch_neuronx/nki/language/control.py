"""`nl` control flow: the program ids of an SPMD grid (`kernel[grid](...)`)
and the loop iterators. A trace runs every grid instance in turn and unrolls
loops to plain ints; `affine_range` declares its iterations independent, which
the trace checks (a read of what an earlier iteration wrote raises)."""

import math

from ..trace import state


class nc(int):  # noqa: N801  (AWS's name)
    """`nl.nc(2)`: a grid dimension of physical cores; `kernel[nl.nc(2)]` is
    `kernel[2]`, a launch on a logical core of two (LNC=2)."""


def program_id(axis=0) -> int:
    tr = state.require("nl.program_id")
    if axis >= len(tr.grid):
        return 0
    return tr.program[axis]


def num_programs(axes=0) -> int:
    tr = state.require("nl.num_programs")
    if isinstance(axes, (tuple, list)):
        return math.prod(num_programs(a) for a in axes)
    return tr.grid[axes] if axes < len(tr.grid) else 1


def program_ndim() -> int:
    return len(state.require("nl.program_ndim").grid)


def _range(kind, args):
    rng = range(*(int(a) for a in args))
    tr = state.current()
    return iter(rng) if tr is None else tr.loop(kind, rng)


def affine_range(*args, **kwargs):
    """Iterations are independent: the compiler may reorder and pipeline
    them. Reading what an earlier iteration wrote raises NKIError."""
    return _range("affine", args)


def sequential_range(*args, **kwargs):
    return _range("sequential", args)


def static_range(*args, **kwargs):
    return _range("static", args)


def dynamic_range(*args, **kwargs):
    """A loop with bounds known on the device only (VirtualRegisters) on the
    chip; here its bounds are Python ints, so it runs as a sequential_range."""
    return _range("sequential", args)
