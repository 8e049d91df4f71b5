"""Loops whose trip count the device decides: `while reg:` over a
`VirtualRegister` and `nl.dynamic_range(start, reg)`.

A register is a one-value int32 SBUF tile (`VirtualRegister`), so every
instruction reads and writes it as a tile. The trace runs a dynamic loop's
body once: `while reg:` asks for the register's truth twice, at the loop's
entry (it answers True: the body is traced) and after the body (it answers
False). The trace records the body between a `loop_begin` and a `loop_end`
instruction, which cost nothing; executor/plan.py runs the body while the
register holds a non-zero value (or, for dynamic_range, while the counter is
below the register), at most `MAX_ITERATIONS` times. A register asked once
and never again (`if reg:`) is refused when the trace ends. The estimate
counts the body once: the trip count is not known before the kernel runs.
"""

from __future__ import annotations

import torch

from ..errors import NKIError
from . import state
from .access import Access
from .alloc import new_buffer
from .buffers import Instr
from .tile import Tile

MAX_ITERATIONS = 10_000_000


class VirtualRegister(Tile):
    """`nisa.register_alloc()`: a register of the core, an int32 (1, 1) SBUF tile here."""

    def __bool__(self):
        tr = state.require("a VirtualRegister as a condition")
        open_loop = tr.dynamic_loops[-1] if tr.dynamic_loops else None
        if open_loop is not None and open_loop.attrs["register"] is self.access.buffer:
            close(tr)
            return False
        begin(tr, "while", self)
        return True


def new_register(name=None) -> VirtualRegister:
    return VirtualRegister(Access.whole(new_buffer((1, 1), torch.int32, name=name or "register")))


def begin(tr, kind: str, register: Tile, counter: Tile | None = None, start=0, step=1) -> Instr:
    """Opens a dynamic loop: `while` (while register != 0) or `range`
    (counter = start, start + step, ... while counter < register)."""
    reads = [register.access]
    ins = Instr("loop_begin", "none", reads, [counter.access] if counter is not None else [], None, tr.line())
    ins.attrs = {"kind": kind, "register": register.access.buffer, "start": int(start), "step": int(step)}
    tr.record(ins)
    tr.dynamic_loops.append(ins)
    return ins


def close(tr) -> Instr:
    """Closes the innermost dynamic loop. A buffer from before the loop that
    its body uses lives to the loop's end: the next pass reads it again, so
    no buffer the body allocates later may take its memory."""
    opened = tr.dynamic_loops.pop()
    for b in tr.buffers:
        if b.alloc_seq < opened.seq <= b.last_use:
            b.last_use = tr.seq
    ins = Instr("loop_end", "none", [], [], None, tr.line())
    ins.attrs = {"begin": opened}
    tr.record(ins)
    return ins


def check_closed(tr):
    if tr.dynamic_loops:
        raise NKIError(
            f"a VirtualRegister was used as a condition at {tr.dynamic_loops[-1].line} outside `while reg:`: "
            f"the emulator runs a register's truth only as a loop condition (`while reg:` or nl.dynamic_range)",
            kernel=tr.kernel_name,
        )
