"""`nl.device_print`: prints a tile's values when the kernel runs (an
instruction on no engine: it costs nothing in the estimate)."""

from ..trace import state
from ..trace.buffers import Instr
from ..trace.operands import as_tile


def device_print(prefix, x, **kwargs):
    x = as_tile(x, "nl.device_print operand")

    def make(rd, wr, acc):
        def run(env):
            print(prefix, rd[0].get(env))

        return run

    tr = state.require("nl.device_print")
    tr.record(Instr("device_print", "none", [x.access], [], make, tr.line()))
