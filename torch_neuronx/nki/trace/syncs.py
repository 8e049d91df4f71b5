"""The meeting points of an LNC=2 launch's two programs (`nisa.sendrecv`,
`nisa.core_barrier`; isa/lnc.py records them).

A `Sync` names one call: its kind, its core and its index `n` among that
core's calls. AWS pairs the Nth call of one core with the Nth of the other,
so the kernel hangs on the chip unless both cores make the same calls in the
same order: `check_pairing` refuses such a trace when it ends, naming the
first call without a partner. At run time the steps meet through the
`Rendezvous` the executor puts in the call's environment (executor/programs.py):
`exchange` hands a value to the other core and returns the other core's,
`barrier` waits for the other core.
"""

from __future__ import annotations

from ..errors import NKIError

RENDEZVOUS = "lnc rendezvous"  # the key of a call's Rendezvous in env[-1] (executor/plan.py)


class Sync:
    __slots__ = ("kind", "core", "n", "line", "src_shape", "dst_shape")

    def __init__(self, kind: str, tr, src_shape=(), dst_shape=()):
        self.kind, self.core, self.line = kind, tr.physical_core(), tr.line()
        counts = tr.sync_counts
        self.n = counts.get(self.core, 0)
        counts[self.core] = self.n + 1
        self.src_shape, self.dst_shape = tuple(src_shape), tuple(dst_shape)

    def describe(self) -> str:
        return f"{self.kind} #{self.n + 1} of core {self.core} at {self.line}"


def check_pairing(trace):
    """Raises unless both cores make the same meeting calls in the same order, with matching shapes."""
    by_core: dict = {}
    for ins in trace.instrs:
        if ins.sync is not None:
            by_core.setdefault(ins.sync.core, []).append(ins.sync)
    if not by_core:
        return
    a, b = by_core.get(0, []), by_core.get(1, [])
    for k in range(max(len(a), len(b))):
        mine = a[k] if k < len(a) else None
        theirs = b[k] if k < len(b) else None
        if mine is None or theirs is None:
            lone = mine or theirs
            raise NKIError(
                f"{lone.describe()} has no partner: core {1 - lone.core} makes {len(b if lone is mine else a)} "
                f"such calls in all, so core {lone.core} would wait forever on the chip; make the same sendrecv and "
                f"core_barrier calls on both cores, in the same order",
                kernel=trace.kernel_name,
            )
        if mine.kind != theirs.kind:
            raise NKIError(
                f"{mine.describe()} meets {theirs.describe()}: AWS pairs the cores' calls by order, so the "
                f"kernel would hang on the chip; make the same calls on both cores, in the same order",
                kernel=trace.kernel_name,
            )
        if mine.kind == "sendrecv":
            for s, r in ((mine, theirs), (theirs, mine)):
                if _count(s.src_shape) != _count(r.dst_shape):
                    raise NKIError(
                        f"{s.describe()} sends {list(s.src_shape)} but {r.describe()} receives into "
                        f"{list(r.dst_shape)}: the element counts must match",
                        kernel=trace.kernel_name,
                    )


def _count(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def exchange(env, sync: Sync, value):
    """Hands `value` to the other core's matching sendrecv; returns what that one sent."""
    return env[-1][RENDEZVOUS].exchange(sync, value)


def barrier(env, sync: Sync):
    env[-1][RENDEZVOUS].exchange(sync, None)
