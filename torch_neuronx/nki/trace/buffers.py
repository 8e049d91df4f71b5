"""What a trace records: buffers (allocations), their memory kinds, loops and
instructions.

A `Buffer` is one allocation: a kernel argument, an HBM output or scratch
tensor, or an on-chip tile; an on-chip buffer carries the trace-time state
the checks of `state.py` read and write (the sequence number of the last write
of each element, and its poison). An `Instr` is one recorded instruction:
what it reads and writes (`access.Access`), how it runs (`step`, built by the
plan) and what the cost model needs (`engine`, `cost`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..chip import dtypes


class BufferKind:
    """`nl.sbuf`, `nl.psum`, `nl.hbm`, `nl.shared_hbm`, `nl.private_hbm`."""

    def __init__(self, name: str):
        self.name = name

    @property
    def on_chip(self) -> bool:
        return self.name in ("sbuf", "psum")

    def __repr__(self):
        return f"nl.{self.name}"


SBUF, PSUM = BufferKind("sbuf"), BufferKind("psum")
HBM, SHARED_HBM, PRIVATE_HBM = BufferKind("hbm"), BufferKind("shared_hbm"), BufferKind("private_hbm")
HBMS = (HBM, SHARED_HBM, PRIVATE_HBM)


class Buffer:
    """One allocation: a kernel argument, an HBM output or scratch tensor, or
    an on-chip tile. `role` is 'arg' (kernel argument `index`), 'out' (a
    shared_hbm tensor the kernel returns or writes), 'scratch' (other HBM) or
    'onchip'. A reshaped argument or output aliases its parent (`parent`)."""

    __slots__ = (
        "id",
        "kind",
        "shape",
        "dtype",
        "name",
        "line",
        "par_axis",
        "role",
        "index",
        "parent",
        "alloc_seq",
        "last_use",
        "stamps",
        "poison",
        "first_bad_read",
        "tiles",
        "children",
        "core",
        "address",
    )

    def __init__(self, trace, kind, shape, dtype, name, role, index=None, par_axis=0, parent=None):
        self.id = len(trace.buffers)
        self.kind, self.shape, self.dtype = kind, tuple(int(s) for s in shape), dtypes.to_torch(dtype)
        self.name = name or f"{kind.name}_{self.id}"
        self.line = trace.line()
        self.role, self.index, self.par_axis, self.parent = role, index, par_axis, parent
        self.core = trace.physical_core()  # whose memory an on-chip buffer is (an LNC=2 launch has two cores')
        self.address = None  # the byte offset in each partition the kernel placed it at (nl.ndarray(address=))
        self.alloc_seq = self.last_use = trace.seq
        self.first_bad_read = None
        self.tiles = 0  # live Tile objects naming this buffer (tile.py frees the state below at 0)
        self.children = 0  # reshaped views sharing the state
        if parent is not None:
            parent.children += 1
        if kind.on_chip and parent is not None:  # a reshaped view shares its parent's state
            self.stamps, self.poison = parent.stamps.view(self.shape), parent.poison.view(self.shape)
        elif kind.on_chip:
            self.stamps = torch.full(self.shape, -1, dtype=torch.int32)
            self.poison = torch.ones(self.shape, dtype=torch.bool)
        else:
            self.stamps = self.poison = None
        trace.buffers.append(self)

    @property
    def partitions(self) -> int:
        return self.shape[self.par_axis] if self.shape else 1

    def bytes_per_partition(self) -> int:
        n = 1
        for i, s in enumerate(self.shape):
            if i != self.par_axis:
                n *= s
        return n * self.dtype.itemsize

    def root(self) -> Buffer:
        """The buffer whose memory this one is a reshaped view of (itself if none)."""
        buf = self
        while buf.parent is not None:
            buf = buf.parent
        return buf

    def describe(self) -> str:
        return f"tile '{self.name}' {list(self.shape)} {str(self.dtype).replace('torch.', '')} in {self.kind.name}"


@dataclass(eq=False)  # loops compare by identity: nested loops can hold equal fields
class Loop:
    kind: str  # affine | sequential | static
    start_seq: int
    iteration: int = 0
    iter_start_seq: int = 0


@dataclass
class Instr:
    """One recorded instruction. `step` builds its runtime closure (executor/plan.py);
    `engine` and `cost` feed the cost model (cost/)."""

    name: str
    engine: str
    reads: list
    writes: list
    step: object
    line: str
    cost: dict = field(default_factory=dict)
    seq: int = 0
    core: int = 0  # the physical core that runs it: program_id(0) of an LNC=2 launch, else 0
    accumulate: bool = False
    carried: bool = False  # reads its destination as an accumulator (dst = dst + x): affine loops may carry it
    box: object = None  # the rectangle a mask narrowed the destination to
    wmask: object = None  # the non-rectangular mask merged into the destination
    index_reads: list = field(default_factory=list)  # the run-time offsets of its indirect operands (trace/access.py)
    oob_skip: bool = False  # indirect operands skip elements outside their tensor (oob_mode.skip)
    sync: object = None  # a meeting point of an LNC=2 launch's two programs (trace/syncs.py)
    attrs: object = None  # a dynamic loop's begin and end markers (trace/dynamic.py)
    est_start: float = 0.0  # when the cost model starts it, in seconds (cost/schedule.py)
