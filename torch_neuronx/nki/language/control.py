"""`nl` control flow: the program ids of an SPMD grid (`kernel[grid](...)`)
and the loop iterators. A trace runs every grid instance in turn and unrolls
loops to plain ints; `affine_range` declares its iterations independent, which
the trace checks (a read of what an earlier iteration wrote raises)."""

import math

from ..errors import NKIUnsupported
from ..trace import dynamic, state
from ..trace.dynamic import VirtualRegister


class nc(int):  # noqa: N801  (AWS's name)
    """`nl.nc(2)`: a grid dimension of physical cores; `kernel[nl.nc(2)]` is
    `kernel[2]`, a launch on a logical core of two (LNC=2). `nl.nc(2) * 4`
    and `4 * nl.nc(2)` are `nl.spmd_dim(nl.nc(2), 4)` and `nl.spmd_dim(4, nl.nc(2))`."""

    @property
    def cores(self) -> int:
        return int(self)

    def core_of(self, index: int) -> int:
        return index

    def __mul__(self, other):
        return spmd_dim(self, other)

    def __rmul__(self, other):
        return spmd_dim(other, self)


class spmd_dim(int):  # noqa: N801  (AWS's name)
    """`nl.spmd_dim(a, b)`: a grid dimension of a * b programs whose factor
    `nl.nc(n)` spreads them over n physical cores: `spmd_dim(nl.nc(2), 2)`
    puts programs 0-1 on core 0 and 2-3 on core 1, `spmd_dim(2, nl.nc(2))`
    alternates them (0, 2 on core 0; 1, 3 on core 1)."""

    def __new__(cls, outer, inner):
        self = super().__new__(cls, int(outer) * int(inner))
        self.outer, self.inner = outer, inner
        return self

    @property
    def cores(self) -> int:
        return int(self.outer) if isinstance(self.outer, nc) else int(self.inner) if isinstance(self.inner, nc) else 1

    def core_of(self, index: int) -> int:
        if isinstance(self.outer, nc):
            return index // int(self.inner)
        if isinstance(self.inner, nc):
            return index % int(self.inner)
        return 0


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
    """A loop whose bound the device decides: `nl.dynamic_range(reg)` or
    `(start, reg[, step])` with `reg` a register runs its body while the
    counter is below the register's value (trace/dynamic.py: the body is
    traced once). With Python ints for bounds it is a sequential_range."""
    if not any(isinstance(a, VirtualRegister) for a in args):
        return _range("sequential", args)
    return _dynamic(args)


def _dynamic(args):
    tr = state.require("nl.dynamic_range")
    start, end, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    if not isinstance(end, VirtualRegister) or isinstance(start, VirtualRegister) or isinstance(step, VirtualRegister):
        raise NKIUnsupported(
            "nl.dynamic_range with a register as its start or step is not supported by the NKI emulator yet: "
            "give the register as the end"
        )
    if int(step) <= 0:
        raise tr.error(f"nl.dynamic_range: the step must be positive, not {step}")
    counter = dynamic.new_register("loop_counter")
    dynamic.begin(tr, "range", end, counter, int(start), int(step))
    yield counter  # the iteration's index, as a register (its value is known at run time only)
    dynamic.close(tr)
