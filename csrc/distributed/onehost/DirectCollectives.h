// Collectives on one host that read the peers' buffers in place, in their
// device memory (PeerMemory.h), instead of copying every byte into a slot and
// out again: an all-gather or reduce-scatter then moves each byte once.
//
// Each takes calls above the eager buffer (EagerCollectives.h) and returns
// false, having done nothing, for the rest. A taken call publishes where its
// buffer lives with its signature; if any rank's buffer is not shareable
// (staged host bytes) or cannot be mapped, every rank runs the slot form
// instead, after the same check. Results are bitwise those of the slot form
// (the same reduction order). TORCH_NEURONX_DIRECT_COLLECTIVES=0 (or
// set_direct_collectives(false)) selects the slot form always; every rank of
// a group must choose alike.
#pragma once

#include "distributed/collectives/Collectives.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

bool direct_allreduce(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);
bool direct_allgather(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);
bool direct_reduce_scatter(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);

// For benchmarks comparing the two forms in one run (call it on every rank
// between calls, after a barrier).
TORCH_NEURONX_API void set_direct_collectives(bool on);

}  // namespace torch_neuronx::dist
