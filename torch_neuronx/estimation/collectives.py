"""Estimated Trainium time of one collective, from the interconnect numbers of
torch_neuronx.trainium (the one table; nothing fitted).

    collective_s(trainium.TRN2, "all_reduce", 64 << 20, world=64)

Contract. `nbytes` is the per-rank buffer, the larger one where they differ
(all_gather: the output; reduce_scatter: the input; gather/scatter: the
root's whole buffer), as nccl-tests' and nccom-test's "size". Ranks are
logical cores (PyTorch devices) numbered chip by chip and instance by
instance; the group is ranks 0..world-1. The result is seconds on every rank
from the call to its end; `world == 1` costs nothing.

Model. Bandwidth: the ring's bus traffic, nbytes x 2(n-1)/n for all_reduce
(a reduce-scatter then an all-gather), x (n-1)/n for all_gather,
reduce_scatter, all_to_all, gather and scatter, x 1 for broadcast, reduce,
send and recv. Every level the group spans moves it at once and the slowest
bounds (hierarchical): each rank's HBM share (a ring hop reads and writes HBM:
2 accesses per byte, 3 where it reduces) or its DMA engines, whichever is
slower; the chip's NeuronLink, one direction (half its published both-ways
figure) when the group spans chips; the instance's EFA when it spans
instances. Latency: steps x per-hop latency (1.5 us within an instance, 15 us
across), per phase and per level (within the instance, across instances), the
steps of the algorithm AWS's runtime picks by size: Mesh (1 step) below 1 MiB,
recursive doubling/halving (log2 n) to 56 MiB, ring (n - 1) above;
all_to_all, gather, scatter, send and recv one direct step per level.

Blind spots: no overlap with compute and no contention with other traffic;
the whole chip NeuronLink bandwidth serves the group even when it uses only
some links of the torus (a 4-chip group in a 4x4 torus has half of them);
Mesh's link over-subscription and KangaRing's halved hops and saved HBM
accesses are not modelled; send/recv is charged as crossing the widest level
the group spans (the peer is not known); the runtime's fixed cost per
collective (launch, synchronisation) is not in the published latencies and
not here; dtype does not matter (reductions run at link speed).
"""

from __future__ import annotations

import math

from .. import trainium

# kind -> phases, each (bus factor of n, reduces, direct): a direct phase has
# one step per level whatever the size.
_RS = (lambda n: (n - 1) / n, True, False)
_AG = (lambda n: (n - 1) / n, False, False)
_KINDS = {
    "all_reduce": (_RS, _AG),
    "all_gather": (_AG,),
    "reduce_scatter": (_RS,),
    "broadcast": ((lambda n: 1.0, False, False),),
    "reduce": ((lambda n: 1.0, True, False),),
    "all_to_all": ((lambda n: (n - 1) / n, False, True),),
    "gather": ((lambda n: (n - 1) / n, False, True),),
    "scatter": ((lambda n: (n - 1) / n, False, True),),
    "send": ((lambda n: 1.0, False, True),),
    "recv": ((lambda n: 1.0, False, True),),
    "barrier": (_RS, _AG),  # an all_reduce of nothing
}
KINDS = tuple(_KINDS)


def _steps(ranks: int, nbytes: int, direct: bool) -> int:
    """Steps of one phase over `ranks` peers at one level [cc-intra]."""
    if ranks <= 1:
        return 0
    if direct or nbytes < trainium.MESH_MAX_BYTES:
        return 1
    if nbytes <= trainium.RDH_MAX_BYTES:
        return math.ceil(math.log2(ranks))
    return ranks - 1


def collective_s(
    core: trainium.NeuronCore,
    kind: str,
    nbytes: int,
    world: int,
    *,
    ranks_per_chip: int | None = None,
    ranks_per_instance: int | None = None,
    instance: str | None = None,
) -> float:
    """Seconds one `kind` collective of `nbytes` per rank over `world` ranks
    takes on `core`'s generation (see the module docstring for the contract
    and the blind spots). ranks_per_chip defaults to the chip's logical cores
    at the default LNC (trainium.ranks_per_chip: 4 on trn2); ranks_per_instance
    to the chips of `instance` (default: the generation's, trn2.48xlarge for
    trn2) times ranks_per_chip."""
    if kind not in _KINDS:
        raise ValueError(f"unknown collective kind {kind!r}; choose one of {list(KINDS)}")
    if world < 1 or nbytes < 0:
        raise ValueError(f"world must be >= 1 and nbytes >= 0, got world={world}, nbytes={nbytes}")
    inst = trainium.INSTANCES[instance or core.instance]
    rpc = ranks_per_chip or trainium.ranks_per_chip(core)
    rpi = ranks_per_instance or inst.chips * rpc
    if world == 1:
        return 0.0
    nbytes = 0 if kind == "barrier" else nbytes
    on_chip = min(world, rpc)
    hbm_per_rank = core.hbm_bytes_per_s_per_chip / on_chip
    dma_per_rank = (core.cores_per_chip // rpc) * core.dma_engines * core.dma_bytes_per_s_per_engine
    in_instance, instances = min(world, rpi), math.ceil(world / rpi)
    if instances > 1 and not inst.efa_bytes_per_s:
        raise ValueError(
            f"{inst.name} has no published EFA bandwidth; a group of {world} ranks spans "
            f"{instances} instances of {rpi} ranks"
        )
    total = 0.0
    for factor, reduces, direct in _KINDS[kind]:
        bus = factor(world) * nbytes
        touches = trainium.HBM_TOUCHES_REDUCE if reduces else trainium.HBM_TOUCHES_COPY
        links = [bus * touches / hbm_per_rank, bus / dma_per_rank]
        if world > rpc:
            links.append(bus / (core.neuronlink_bytes_per_s_per_chip / 2))
        if instances > 1:
            links.append(bus / inst.efa_bytes_per_s)
        total += max(links)
        total += _steps(in_instance, nbytes, direct) * trainium.HOP_LATENCY_INTRA_S
        total += _steps(instances, nbytes, direct) * trainium.HOP_LATENCY_INTER_S
    return total


# c10d ops (what torch.distributed calls dispatch to) -> collective kind
C10D_KINDS = {
    "allreduce_": "all_reduce",
    "allreduce_coalesced_": "all_reduce",
    "allgather_": "all_gather",
    "_allgather_base_": "all_gather",
    "allgather_coalesced_": "all_gather",
    "allgather_into_tensor_coalesced_": "all_gather",
    "reduce_scatter_": "reduce_scatter",
    "_reduce_scatter_base_": "reduce_scatter",
    "reduce_scatter_tensor_coalesced_": "reduce_scatter",
    "broadcast_": "broadcast",
    "alltoall_": "all_to_all",
    "alltoall_base_": "all_to_all",
    "send": "send",
    "recv_": "recv",
    "recv_any_source_": "recv",
    "barrier": "barrier",
    "monitored_barrier_": "barrier",
    "reduce_": "reduce",
    "gather_": "gather",
    "scatter_": "scatter",
}
