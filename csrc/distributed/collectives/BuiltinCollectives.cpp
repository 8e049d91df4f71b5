// The built-in entries of the collective table: for each collective its
// argument check, the signature the ranks compare, and its implementation on
// each transport (one host; across hosts) and the one-host fast paths.
#include <c10/util/Exception.h>

#include "distributed/collectives/Collectives.h"
#include "distributed/multihost/MultiHostCollectives.h"
#include "distributed/onehost/DirectCollectives.h"
#include "distributed/onehost/EagerCollectives.h"
#include "distributed/onehost/ShmCollectives.h"

namespace torch_neuronx::dist {
namespace {

CallSignature sized(const HostCall& c) { return {0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), -1}; }
CallSignature rooted(const HostCall& c) {
  return {0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), c.root};
}
CallSignature reducing(const HostCall& c) {
  return {0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), c.spec.code};
}

void root_in_group(const CollectiveDef& def, const HostCall& c, int world) {
  TORCH_CHECK(c.root >= 0 && c.root < world, def.name, ": root rank ", c.root, " is outside the group of ", world,
              " (pass a rank of the group)");
}

}  // namespace

const CollectiveDef& kBarrier =
    register_collective({"barrier", nullptr, [](const HostCall&) { return CallSignature{0, -1, 0, -1}; },
                         [](ShmCollectives&, const HostCall&) {},  // the signature check is the meeting
                         [](MultiHostCollectives& m, const HostCall&) { m.barrier(); }});

const CollectiveDef& kAllreduce = register_collective(
    {"allreduce", nullptr, reducing,
     [](ShmCollectives& s, const HostCall& c) { s.reduce_chunks("allreduce", c.out, c.numel, c.dtype, c.spec, -1); },
     [](MultiHostCollectives& m, const HostCall& c) { m.allreduce(c.out, c.numel, c.dtype, c.spec); }, eager_allreduce,
     direct_allreduce});

const CollectiveDef& kBroadcast = register_collective(
    {"broadcast", root_in_group, rooted,
     [](ShmCollectives& s, const HostCall& c) { s.broadcast_chunks("broadcast", c.out, bytes_of(c), c.root); },
     [](MultiHostCollectives& m, const HostCall& c) { m.broadcast(c.out, c.numel, c.dtype, c.root); },
     eager_broadcast});

const CollectiveDef& kAllgather = register_collective(
    {"allgather", nullptr, sized,
     [](ShmCollectives& s, const HostCall& c) { s.gather_chunks("allgather", c.in, c.out, bytes_of(c), -1); },
     [](MultiHostCollectives& m, const HostCall& c) { m.allgather(c.in, c.out, c.numel, c.dtype); }, eager_allgather,
     direct_allgather});

const CollectiveDef& kReduceScatter = register_collective(
    {"reduce_scatter", nullptr, reducing,
     [](ShmCollectives& s, const HostCall& c) {
       s.reduce_scatter_chunks("reduce_scatter", c.in, c.out, c.numel, c.dtype, c.spec);
     },
     [](MultiHostCollectives& m, const HostCall& c) { m.reduce_scatter(c.in, c.out, c.numel, c.dtype, c.spec); },
     eager_reduce_scatter, direct_reduce_scatter});

// The root and the reduce op both must agree: root * 64 + op code.
const CollectiveDef& kReduce = register_collective(
    {"reduce", root_in_group,
     [](const HostCall& c) {
       return CallSignature{0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), c.root * 64 + c.spec.code};
     },
     [](ShmCollectives& s, const HostCall& c) { s.reduce_chunks("reduce", c.out, c.numel, c.dtype, c.spec, c.root); },
     [](MultiHostCollectives& m, const HostCall& c) { m.reduce(c.out, c.numel, c.dtype, c.spec, c.root); }});

const CollectiveDef& kGather = register_collective(
    {"gather", root_in_group, rooted,
     [](ShmCollectives& s, const HostCall& c) { s.gather_chunks("gather", c.in, c.out, bytes_of(c), c.root); },
     [](MultiHostCollectives& m, const HostCall& c) { m.gather(c.in, c.out, c.numel, c.dtype, c.root); }});

const CollectiveDef& kScatter = register_collective(
    {"scatter", root_in_group, rooted,
     [](ShmCollectives& s, const HostCall& c) { s.scatter_chunks("scatter", c.in, c.out, bytes_of(c), c.root); },
     [](MultiHostCollectives& m, const HostCall& c) { m.scatter(c.in, c.out, c.numel, c.dtype, c.root); }});

// Sizes may differ per pair: the transport checks the whole size matrix.
const CollectiveDef& kAlltoall = register_collective(
    {"all_to_all", nullptr, [](const HostCall& c) { return CallSignature{0, static_cast<int32_t>(c.dtype), -1, -1}; },
     [](ShmCollectives& s, const HostCall& c) {
       s.alltoall_chunks("all_to_all", c.send, c.send_bytes, c.recv, c.recv_bytes);
     },
     [](MultiHostCollectives& m, const HostCall& c) {
       m.alltoall(c.send, c.send_bytes, c.recv, c.recv_bytes, c.dtype);
     }});

}  // namespace torch_neuronx::dist
