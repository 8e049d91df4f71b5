"""The two physical cores of a logical core (LNC=2) talking to each other:
`nisa.sendrecv` (each core sends a tile to the other's destination and
receives the other's into its own) and `nisa.core_barrier` (both cores wait
until both arrive). The same calls are `nki.lnc`'s.

Each call records an instruction with a `Sync` (trace/syncs.py): its kind
and its index among its core's calls, which pair the Nth call of one core
with the Nth of the other, as AWS pairs them (by program order). The trace
checks the pairing when it ends; executor/programs.py runs the cores'
programs in two threads that meet at these instructions; cost/schedule.py
times them.
"""

from __future__ import annotations

from ..errors import NKIUnsupported
from ..trace import state, syncs
from ..trace.buffers import PSUM, Instr
from ..trace.emit import emit
from ..trace.operands import as_tile, dma_cost
from .calls import REQ, need, split


def _peer_of(tr, name: str, ranks) -> int:
    core = tr.physical_core()
    if tr.cores() < 2:
        raise tr.error(
            f"nisa.{name} exchanges data between the two physical cores of an LNC=2 launch, but this launch runs "
            f"on one core: launch the kernel as kernel[2](...) (or over nl.nc(2)) on {tr.target}"
        )
    for r in ranks:
        if r not in (0, 1):
            raise tr.error(f"nisa.{name}: a rank must be 0 or 1 (a physical core of the logical core), not {r!r}")
        if r == core:
            raise NKIUnsupported(
                f"nisa.{name} from core {core} to itself is not supported by the NKI emulator: "
                f"send to the other core (1 - nl.program_id(0))"
            )
    return 1 - core


def sendrecv(*args, **kwargs):
    """Sends src to the other core's dst and receives the other core's src into dst."""
    d = split(
        args,
        kwargs,
        {"src": REQ, "dst": REQ, "send_to_rank": REQ, "recv_from_rank": REQ, "pipe_id": None, "dma_engine": None},
    )
    need(d, "src", "dst", "send_to_rank", "recv_from_rank")
    tr = state.require("nisa.sendrecv")
    src, dst = as_tile(d["src"], "sendrecv src"), as_tile(d["dst"], "sendrecv dst")
    for t, what in ((src, "src"), (dst, "dst")):
        if t.access.buffer.kind is PSUM:
            raise tr.error(f"nisa.sendrecv: {what} is in PSUM, which DMA cannot reach: use an SBUF or HBM tensor")
    _peer_of(tr, "sendrecv", (int(d["send_to_rank"]), int(d["recv_from_rank"])))
    if src.access.buffer.dtype != dst.access.buffer.dtype:
        raise tr.error(f"nisa.sendrecv: src is {src.dtype} but dst is {dst.dtype}; DMA between cores does not cast")
    sync = syncs.Sync("sendrecv", tr, src.shape, dst.shape)

    def make(rd, wr, acc):
        source, out = rd[0], wr[0]

        def run(env):
            out.put(env, syncs.exchange(env, sync, source.get(env)).reshape(out.shape))

        return run

    emit("sendrecv", "dma", None, [src], dst=dst, make_step=make, keep_src_shapes=True, cost=dma_cost(src), sync=sync)
    return dst


def core_barrier(*args, **kwargs):
    """Waits until both cores of the logical core reach their matching barrier."""
    d = split(args, kwargs, {"data": REQ, "cores": REQ, "engine": None})
    need(d, "data", "cores")
    tr = state.require("nisa.core_barrier")
    data = as_tile(d["data"], "core_barrier data")
    cores = d["cores"]
    cores = tuple(int(c) for c in cores) if isinstance(cores, (tuple, list)) else (int(cores),)
    if len(set(cores)) < 2:  # a barrier among one core waits for no one
        return None
    if sorted(cores) != [0, 1]:
        raise tr.error(f"nisa.core_barrier: cores must be (0, 1), the two cores of a logical core, not {cores}")
    if tr.cores() < 2:
        raise tr.error(
            f"nisa.core_barrier over cores {cores} in a launch on one core: the other core never arrives, so the "
            f"kernel would hang on the chip; launch it as kernel[2](...) (or over nl.nc(2)) on {tr.target}"
        )
    sync = syncs.Sync("core_barrier", tr)

    def make(rd, wr, acc):
        return lambda env: syncs.barrier(env, sync)

    tr.record(Instr("core_barrier", "gpsimd", [data.access], [], make, tr.line(), {"bytes": 0}, sync=sync))
    return None
