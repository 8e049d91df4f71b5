"""One trace of a kernel: its state, the instructions it records and the
checks that run while it records them.

A trace runs the kernel's Python once per (shapes, dtypes, strides,
non-tensor arguments), with loops unrolled to plain ints and every grid
instance in turn. Each tile operation appends an `Instr` (no data moves while
tracing); `executor/plan.py` turns the list into a replayable plan. While
recording, the trace checks what the hardware would refuse, before anything runs:
  - values computed from on-chip elements never written (each on-chip buffer
    carries a poison tensor, True where an element holds no defined value;
    instructions propagate it, as NaN sentinels would): reading such an
    element is allowed, as on the chip (AWS's kernels compute on the unloaded
    rows of a masked tail tile), but storing it to HBM or returning it raises;
  - loop-carried dependencies in `affine_range` (an element read in one
    iteration that an earlier iteration of the same loop wrote, and this one
    has not; accumulation with `+=` is the allowed associative reduction);
  - at the end, SBUF and PSUM capacity over the buffers live at each point.
The trace of this thread is `current()`; `active(trace)` makes it so.
"""

from __future__ import annotations

import linecache
import os
import sys
import threading

import torch

from ..chip import targets
from ..errors import NKIError
from .buffers import PSUM, SBUF, Buffer, Instr, Loop

# the kernel's source line is the innermost frame outside torch_neuronx/nki (any of its folders)
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_local = threading.local()


def _ours(code) -> bool:
    return os.path.abspath(code.co_filename).startswith(_PKG_DIR)


def _where(code, lineno: int) -> str:
    text = linecache.getline(code.co_filename, lineno).strip()
    return f"{os.path.basename(code.co_filename)}:{lineno} `{text}`"


class Trace:
    def __init__(self, kernel_name: str, target: str, grid: tuple):
        self.kernel_name = kernel_name
        self.limits = targets.for_target(target)
        self.target = target
        self.grid = grid
        for g in grid:
            if getattr(g, "cores", 1) > self.limits.lnc:
                raise NKIError(
                    f"kernel '{kernel_name}': a grid over {g.cores} physical cores (nl.nc), but a {target} "
                    f"logical NeuronCore has {self.limits.lnc}"
                )
        self.program = (0,) * len(grid)
        self.instrs: list[Instr] = []
        self.buffers: list[Buffer] = []
        self.seq = 0
        self.loops: list[Loop] = []
        self.shared: list[Buffer] = []  # shared_hbm allocations of the first grid instance
        self.shared_next = 0
        self.sync_counts: dict = {}  # per physical core: its sendrecv and core_barrier calls so far (syncs.py)
        self.dynamic_loops: list = []  # the dynamic loops open now, innermost last (dynamic.py)

    def cores(self) -> int:
        """The physical cores the launch runs on (2 for LNC=2's kernel[2] or a grid over nl.nc(2))."""
        for g in self.grid:
            if hasattr(g, "core_of"):
                return g.cores
        return self.limits.lnc if self.grid == (self.limits.lnc,) and self.limits.lnc > 1 else 1

    def physical_core(self) -> int:
        """The physical core the current program runs on. A grid dimension of
        physical cores (`nl.nc(2)`, `nl.spmd_dim`: anything with `core_of`)
        says which; `kernel[n]` with n the target's cores per logical core
        (`kernel[2]` on Trainium2 and 3, LNC=2) runs program i on core i. The
        cores run at once; the programs of one core, one after another."""
        for axis, g in enumerate(self.grid):
            if hasattr(g, "core_of"):
                return g.core_of(self.program[axis])
        return self.program[0] if self.grid == (self.limits.lnc,) and self.limits.lnc > 1 else 0

    # -- where -----------------------------------------------------------
    def line(self) -> str:
        """The kernel's source line being traced: the innermost frame outside this package."""
        f = sys._getframe(1)
        while f is not None and _ours(f.f_code):
            f = f.f_back
        return "?" if f is None else _where(f.f_code, f.f_lineno)

    @staticmethod
    def line_of(tb) -> str:
        """The kernel's source line in a traceback: its last frame outside this package."""
        where = "?"
        while tb is not None:
            if not _ours(tb.tb_frame.f_code):
                where = _where(tb.tb_frame.f_code, tb.tb_lineno)
            tb = tb.tb_next
        return where

    def error(self, message: str) -> NKIError:
        return NKIError(message, kernel=self.kernel_name, line=self.line())

    # -- recording -------------------------------------------------------
    def record(self, instr: Instr, poison_rule=None) -> Instr:
        """Checks and appends an instruction. `poison_rule(poisons)` maps the
        poison of each read to the poison of the result (default: any poisoned
        read poisons the element it broadcasts to; reads that do not broadcast
        to the result poison whole partitions)."""
        instr.seq = self.seq
        instr.core = self.physical_core()
        dst = instr.writes[0].buffer if instr.writes else None
        carried = instr.accumulate or instr.carried
        poisons = [self.check_read(acc, skip_deps=carried and acc.buffer is dst) for acc in instr.reads]
        for acc in instr.index_reads:  # an offset read from never-written SBUF reaches unknown elements
            if self.check_read(acc) is not None and bool(acc.gather(acc.buffer.poison).any()):
                raise self.error(
                    f"{instr.name}: the run-time offset is read from never-written elements of "
                    f"{acc.buffer.describe()}: write the offsets first"
                )
        for acc in instr.writes:
            out = _propagate(poisons, acc.shape, poison_rule)
            self.mark_written(acc, instr.seq, out)
        self.seq += 1
        self.instrs.append(instr)
        return instr

    def touch(self, buf: Buffer):
        while buf is not None:
            buf.last_use = self.seq
            buf = buf.parent

    def check_read(self, acc, skip_deps=False):
        """Checks a read for loop-carried dependencies; returns the poison
        of the elements read (None for HBM)."""
        buf = acc.buffer
        self.touch(buf)
        if not buf.kind.on_chip or buf.stamps is None:
            return None
        poison = acc.gather(buf.poison)
        if acc.mask is not None:
            poison = poison & acc.mask.expand(poison.shape)
        if buf.first_bad_read is None and bool(poison.any()):
            buf.first_bad_read = self.line()
        if skip_deps:
            return poison
        st = acc.gather(buf.stamps)
        if acc.mask is not None:
            st = torch.where(acc.mask.expand(st.shape), st, -1)
        for loop in self.loops:
            if loop.kind != "affine" or loop.start_seq <= buf.alloc_seq or loop.iteration == 0:
                continue
            carried = (st >= loop.start_seq) & (st < loop.iter_start_seq)
            if bool(carried.any()):
                raise self.error(
                    f"loop-carried dependency in nl.affine_range: iteration {loop.iteration} reads {buf.describe()} "
                    f"written by an earlier iteration; affine_range iterations must be independent (only "
                    f"accumulation with += may carry over). Use nl.sequential_range for this loop"
                )
        return poison

    def mark_written(self, acc, seq: int, poison=None):
        """Records a write: stamps, and the poison of the values written
        (False: defined). An HBM write of poisoned values raises."""
        buf = acc.buffer
        self.touch(buf)
        if not buf.kind.on_chip:
            if poison is not None and bool(poison.any()):
                src = next((b for b in self.buffers if b.first_bad_read), None)
                where = (
                    f" (in this kernel, never-written elements, of {src.describe()}, were first read at "
                    f"{src.first_bad_read})"
                    if src
                    else ""
                )
                raise self.error(
                    f"writes {int(poison.sum())} value(s) computed from uninitialised SBUF/PSUM "
                    f"elements to {buf.describe()}{where}: initialise the tile (nl.zeros, a load) "
                    f"or mask the store"
                )
            return
        if buf.stamps is None:
            return
        acc.scatter(buf.stamps, torch.full((), seq, dtype=torch.int32))
        if poison is not None and 0 < poison.dim() < len(acc.shape):  # (P,) is (P, 1)
            poison = poison.reshape(tuple(poison.shape) + (1,) * (len(acc.shape) - poison.dim()))
        acc.scatter(buf.poison, torch.zeros((), dtype=torch.bool) if poison is None else poison.expand(acc.shape))

    def retarget(self, instr: Instr, temp, acc, accumulate=False):
        """Makes the last instruction write `acc` instead of the temporary
        tile it allocated (`t[...] = nl.load(...)`, `psum += nl.matmul(...)`)."""
        temp.role = "dropped"
        if instr.box is not None:
            acc = acc.restrict(instr.box)
        if instr.wmask is not None:
            acc = acc.masked(instr.wmask)
        poison = temp.poison.clone() if temp.poison is not None else None
        if poison is not None and instr.box is not None:
            poison = poison[tuple(instr.box)]
        if accumulate:
            extra = self.check_read(acc, skip_deps=True)
            if extra is not None and poison is not None:
                poison = poison | extra
            instr.reads = instr.reads + [acc]
            instr.accumulate = True
        instr.writes = [acc]
        self.mark_written(acc, instr.seq, poison)

    # -- loops -----------------------------------------------------------
    def loop(self, kind: str, rng: range):
        lp = Loop(kind, self.seq)
        self.loops.append(lp)
        try:
            for i, v in enumerate(rng):
                lp.iteration = i
                lp.iter_start_seq = self.seq
                yield v
        finally:
            self.loops.remove(lp)

    # -- capacity (at the end of the trace) ------------------------------
    def check_capacity(self):
        """SBUF and PSUM in use at each allocation, on each physical core: the
        buffers the emulator placed, summed, plus the furthest extent of those
        the kernel placed itself (`address=`: a circular buffer's tiles share
        their memory)."""
        for core in sorted({b.core for b in self.buffers}):  # each physical core has its own SBUF and PSUM
            self._check_capacity_of(core)

    def _check_capacity_of(self, core: int):
        lim = self.limits
        sbuf_cap = lim.sbuf_bytes_per_partition
        bank = lim.psum_bank_bytes
        events = []
        for b in self.buffers:
            if not b.kind.on_chip or b.role != "onchip" or b.core != core:
                continue
            size = b.bytes_per_partition()
            if b.kind is PSUM:
                end = None if b.address is None else -(-(b.address + size) // bank)
                size = -(-size // bank)  # banks
            else:
                end = None if b.address is None else b.address + size
            events.append((b.alloc_seq, 0, size, end, b))
            events.append((b.last_use, 1, -size, end, b))
        events.sort(key=lambda e: (e[0], e[1]))
        used = {SBUF: 0, PSUM: 0}
        placed = {SBUF: [], PSUM: []}  # the ends of the live placed buffers
        for _, _, size, end, b in events:
            if end is not None:
                if size > 0:
                    placed[b.kind].append(end)
                else:
                    placed[b.kind].remove(end)
            else:
                used[b.kind] += size
            if size <= 0:
                continue
            total = used[b.kind] + max(placed[b.kind], default=0)
            if b.kind is SBUF and total > sbuf_cap:
                raise NKIError(
                    f"SBUF capacity exceeded: {total} bytes per partition are live when {b.describe()} is "
                    f"allocated, over the {self.target} limit of {sbuf_cap} bytes per partition "
                    f"({lim.partitions} x {sbuf_cap // 1024} KiB = {lim.partitions * sbuf_cap // 2**20} MiB); "
                    f"free tiles earlier or use smaller tiles",
                    kernel=self.kernel_name,
                    line=b.line,
                )
            if b.kind is PSUM and total > lim.psum_banks:
                raise NKIError(
                    f"PSUM capacity exceeded: {total} banks of {bank} bytes per partition are live when "
                    f"{b.describe()} is allocated, over the limit of {lim.psum_banks} banks "
                    f"({lim.psum_banks * bank // 1024} KiB per partition, 2 MiB in all)",
                    kernel=self.kernel_name,
                    line=b.line,
                )


def _propagate(poisons, shape, rule):
    known = [p for p in poisons if p is not None]
    if not known:
        return None
    if rule is not None:
        return rule(poisons)
    out = torch.zeros(shape, dtype=torch.bool)
    for p in known:
        if p.dim() <= len(shape):
            try:
                out = out | p.expand(shape)
                continue
            except RuntimeError:
                pass
        if p.dim() and shape and bool(p.any()):  # a matmul, transpose or reduction: by partition
            rows = p.reshape(p.shape[0], -1).any(dim=1) if p.dim() > 1 else p
            if rows.shape[0] == shape[0]:
                out |= rows.reshape([shape[0]] + [1] * (len(shape) - 1))
            else:
                out |= True
    return out


def current() -> Trace | None:
    return getattr(_local, "trace", None)


def require(what: str) -> Trace:
    t = current()
    if t is None:
        raise NKIError(f"{what} can only be called inside a kernel decorated with @nki.jit while it runs")
    return t


class active:
    """Context manager making `trace` the current trace of this thread."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self):
        self.prev = current()
        _local.trace = self.trace
        return self.trace

    def __exit__(self, *exc):
        _local.trace = self.prev
