// Small collectives in one meeting of the ranks instead of two to four: each
// rank publishes its data with its signature (ShmCollectives::
// check_signature_eager), and after the check every rank reads what it needs
// from every other rank's buffer. The latency of an 8-byte allreduce is then
// one exchange of cache lines between the processes.
//
// Each returns false, having done nothing, when the call does not fit the
// eager buffer; run_collective then runs the chunked form. Whether it fits
// depends only on what the signature check compares, so every rank of a
// matching call takes the same path.
#pragma once

#include "distributed/collectives/Collectives.h"

namespace torch_neuronx::dist {

bool eager_allreduce(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);
bool eager_broadcast(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);
bool eager_allgather(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);
bool eager_reduce_scatter(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call);

}  // namespace torch_neuronx::dist
