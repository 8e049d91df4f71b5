"""`estimate(trace)`: the instructions of a trace on the engines' timelines.

Engines run their own instruction streams: an instruction starts when its
engine is free and the instructions that wrote what it reads (or read or
wrote what it overwrites) have finished, so loads of one tile overlap the
matmul of the previous one exactly as far as the kernel's buffers allow; a
DMA completes a fixed latency (descriptors, semaphores) after its transfer.
The programs of an LNC=2 launch (`Instr.core`) run at once, each on its own
core's engines and DMA queues, sharing HBM: a core waits for its own
accesses only (nothing orders the two cores but their meetings), and the
estimate is the logical core's. Not modelled: the
kernel's launch preamble, SBUF bank conflicts, DMA descriptor efficiency for
small rows, the Vector engine's bf16 fast modes.
"""

from __future__ import annotations

import torch

from .instructions import instruction_time
from .report import Estimate


class _Times:
    """When each element of each buffer was last written and last read (on-chip
    buffers per element, so writes to disjoint parts of one buffer do not wait
    for each other; HBM tensors as a whole)."""

    def __init__(self):
        self.state: dict = {}

    def _tensors(self, buf):
        root = buf.root()
        st = self.state.get(root.id)
        if st is None:
            st = self.state[root.id] = (
                (torch.zeros(root.shape, dtype=torch.float64), torch.zeros(root.shape, dtype=torch.float64))
                if root.kind.on_chip
                else [0.0, 0.0]
            )
        if isinstance(st, list) or buf is root:
            return st
        return st[0].view(buf.shape), st[1].view(buf.shape)

    def last(self, acc, which: int) -> float:
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            return st[which]
        vals = acc.gather(st[which])
        return float(vals.max()) if vals.numel() else 0.0

    def wrote(self, acc, t: float):
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            st[0] = max(st[0], t)
        else:
            acc.scatter(st[0], torch.tensor(t, dtype=torch.float64))

    def read(self, acc, t: float):
        st = self._tensors(acc.buffer)
        if isinstance(st, list):
            st[1] = max(st[1], t)
        else:
            acc.scatter(st[1], torch.maximum(acc.gather(st[1]), torch.tensor(t, dtype=torch.float64)))


def _in_meeting_order(instrs):
    """Groups of instructions to place: one instruction, or the two calls of
    one meeting of an LNC=2 launch's cores (trace/syncs.py), after everything
    either core issued before it."""
    if not any(ins.sync is not None for ins in instrs):
        yield from ([ins] for ins in instrs)
        return
    segments = {0: [[]], 1: [[]]}
    meetings = {0: [], 1: []}
    for ins in instrs:
        if ins.sync is not None:
            meetings[ins.core].append(ins)
            segments[ins.core].append([])
        else:
            segments[ins.core][-1].append(ins)
    for k in range(len(meetings[0]) + 1):
        for c in (0, 1):
            yield from ([ins] for ins in segments[c][k])
        if k < len(meetings[0]):
            yield [meetings[0][k], meetings[1][k]]


class _Timeline:
    """The engines, DMA queues and buffers of the launch as instructions are placed."""

    def __init__(self, core):
        self.core = core
        self.engine_free: dict = {}  # per (physical core, engine)
        self.dma_free: dict = {}  # per physical core: when each of its DMA queues is free
        self.times_of: dict = {}  # per physical core: a core waits only for its own reads and writes

    def times(self, core: int) -> _Times:
        t = self.times_of.get(core)
        if t is None:
            t = self.times_of[core] = _Times()
        return t

    def ready(self, ins) -> float:
        t = 0.0
        for a in ins.reads:  # read after write
            t = max(t, self.times(ins.core).last(a, 0))
        for a in ins.writes:  # write after read, and after write (the compiler keeps a core's writes in order)
            t = max(t, self.times(ins.core).last(a, 1), self.times(ins.core).last(a, 0))
        return t

    def place(self, ins, eng, dur, n_dma, ready):
        """(start, end) of ins on its core's engine, not before `ready`."""
        core = self.core
        if eng == "dma":
            queues = self.dma_free.setdefault(ins.core, [0.0] * core.dma_engines)
            order = sorted(range(len(queues)), key=queues.__getitem__)[:n_dma]
            start = max([ready] + [queues[i] for i in order])
            for i in order:
                queues[i] = start + dur
            return start, start + dur + core.dma_fixed_latency_s
        start = max(ready, self.engine_free.get((ins.core, eng), 0.0))
        self.engine_free[(ins.core, eng)] = start + dur
        return start, start + dur

    def done(self, ins, end):
        for a in ins.writes:
            self.times(ins.core).wrote(a, end)
        for a in ins.reads:
            self.times(ins.core).read(a, end)


def estimate(trace) -> Estimate:
    """A sendrecv starts when both cores' sources are ready; a core_barrier
    ends a DMA latency after the later core arrives, and its data tensor
    counts as written then, so what either core reads of it afterwards waits."""
    core = trace.limits
    tl = _Timeline(core)
    busy: dict = {}  # per engine; DMA: the time all 16 DMA engines would need at full use
    count: dict = {}
    dma_bytes = flops = 0
    end_all = 0.0
    by_last_use = sorted((b for b in trace.buffers if b.kind.on_chip and b.parent is None), key=lambda b: b.last_use)
    dead = 0
    # buffers past their last use drop their times, while instructions are placed in trace order
    prune = not any(ins.sync is not None for ins in trace.instrs)
    timeline = []
    for group in _in_meeting_order(trace.instrs):
        group = [ins for ins in group if ins.engine != "none"]
        if not group:
            continue
        while prune and dead < len(by_last_use) and by_last_use[dead].last_use < group[0].seq:
            for times in tl.times_of.values():
                times.state.pop(by_last_use[dead].id, None)
            dead += 1
        timed = [(ins, *instruction_time(ins, core)) for ins in group]
        ready = [tl.ready(ins) for ins in group]
        if len(group) == 2 and group[0].sync.kind == "sendrecv":  # each side waits for both sources
            ready = [max(ready)] * 2
        placed = [tl.place(ins, eng, dur, n, r) for (ins, eng, dur, n), r in zip(timed, ready)]
        if len(group) == 2 and group[0].sync.kind == "core_barrier":
            met = max(start for start, _ in placed) + core.dma_fixed_latency_s
            placed = [(start, met) for start, _ in placed]
            for ins in group:
                tl.engine_free[(ins.core, ins.engine)] = met
                for a in ins.reads:  # the shared tensor it guards: both cores' writes are in
                    tl.times(ins.core).wrote(a, met)
        for (ins, eng, dur, n_dma), (start, end) in zip(timed, placed):
            if eng == "dma":
                dma_bytes += ins.cost.get("bytes", 0)
            elif eng == "tensor" and ins.name not in ("nc_transpose", "transpose"):
                flops += 2 * ins.cost.get("k", 0) * ins.cost.get("m", 0) * ins.cost.get("n", 0)
            busy[eng] = busy.get(eng, 0.0) + (dur * n_dma / core.dma_engines if eng == "dma" else dur)
            timeline.append((ins.name, eng, start * 1e6, dur * 1e6, ins.line))
            ins.est_start = start
            count[eng] = count.get(eng, 0) + 1
            tl.done(ins, end)
            end_all = max(end_all, end)
    return Estimate(
        trace.kernel_name,
        trace.target,
        end_all * 1e6,
        {e: t * 1e6 for e, t in busy.items()},
        count,
        dma_bytes,
        flops,
        timeline,
        1 + max((ins.core for ins in trace.instrs), default=0),
    )
