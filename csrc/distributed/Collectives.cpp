#include "distributed/Collectives.h"

#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "distributed/DirectCollectives.h"
#include "distributed/EagerCollectives.h"
#include "distributed/MultiHostCollectives.h"
#include "distributed/ShmCollectives.h"

namespace torch_neuronx::dist {
namespace {

struct Table {
  std::mutex mu;
  std::unordered_map<uint32_t, std::unique_ptr<CollectiveDef>> by_id;
};

Table& table() {
  static auto* t = new Table();  // leaked: entries are used until exit
  return *t;
}

uint32_t fnv1a(const char* s) {
  uint32_t h = 2166136261u;
  for (; *s; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 16777619u;
  return h == 0 ? 1 : h;  // 0 means "no call" in a signature slot
}

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

const CollectiveDef& register_collective(CollectiveDef def) {
  TORCH_CHECK(def.name && def.signature && def.on_one_host && def.across_hosts, "register_collective: '",
              def.name ? def.name : "(null)", "' needs a name, a signature and both transports");
  def.id = fnv1a(def.name);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_id.find(def.id);
  if (it != t.by_id.end()) {
    const std::string taken = it->second->name;
    TORCH_CHECK(false, "register_collective: '", def.name, "' ",
                taken == def.name ? "is registered already" : "has the id of '" + taken + "'; pick another name");
  }
  return *(t.by_id[def.id] = std::make_unique<CollectiveDef>(def));
}

const CollectiveDef& find_collective(const std::string& name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const auto& [id, def] : t.by_id) {
    if (name == def->name) return *def;
  }
  TORCH_CHECK(false, "no collective named '", name, "' is registered with the neuron process group");
}

void run_collective(const CollectiveDef& def, const HostCall& call, ShmCollectives& host,
                    MultiHostCollectives* hosts) {
  if (hosts == nullptr && def.eager != nullptr && def.eager(host, def, call)) return;
  if (hosts == nullptr && def.direct != nullptr && def.direct(host, def, call)) return;
  host.check_signature(def, def.signature(call));
  if (hosts != nullptr) def.across_hosts(*hosts, call);
  else def.on_one_host(host, call);
}

std::string collective_name(uint32_t id) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_id.find(id);
  return it == t.by_id.end() ? "unknown collective " + std::to_string(id) : it->second->name;
}

const CollectiveDef& kBarrier = register_collective({
    "barrier", nullptr, [](const HostCall&) { return CallSignature{0, -1, 0, -1}; },
    [](ShmCollectives&, const HostCall&) {},  // the signature check is the meeting
    [](MultiHostCollectives& m, const HostCall&) { m.barrier(); }});

const CollectiveDef& kAllreduce = register_collective({
    "allreduce", nullptr, reducing,
    [](ShmCollectives& s, const HostCall& c) { s.reduce_chunks("allreduce", c.out, c.numel, c.dtype, c.spec, -1); },
    [](MultiHostCollectives& m, const HostCall& c) { m.allreduce(c.out, c.numel, c.dtype, c.spec); },
    eager_allreduce, direct_allreduce});

const CollectiveDef& kBroadcast = register_collective({
    "broadcast", root_in_group, rooted,
    [](ShmCollectives& s, const HostCall& c) { s.broadcast_chunks("broadcast", c.out, bytes_of(c), c.root); },
    [](MultiHostCollectives& m, const HostCall& c) { m.broadcast(c.out, c.numel, c.dtype, c.root); },
    eager_broadcast});

const CollectiveDef& kAllgather = register_collective({
    "allgather", nullptr, sized,
    [](ShmCollectives& s, const HostCall& c) { s.gather_chunks("allgather", c.in, c.out, bytes_of(c), -1); },
    [](MultiHostCollectives& m, const HostCall& c) { m.allgather(c.in, c.out, c.numel, c.dtype); },
    eager_allgather, direct_allgather});

const CollectiveDef& kReduceScatter = register_collective({
    "reduce_scatter", nullptr, reducing,
    [](ShmCollectives& s, const HostCall& c) {
      s.reduce_scatter_chunks("reduce_scatter", c.in, c.out, c.numel, c.dtype, c.spec);
    },
    [](MultiHostCollectives& m, const HostCall& c) { m.reduce_scatter(c.in, c.out, c.numel, c.dtype, c.spec); },
    eager_reduce_scatter, direct_reduce_scatter});

// The root and the reduce op both must agree: root * 64 + op code.
const CollectiveDef& kReduce = register_collective({
    "reduce", root_in_group,
    [](const HostCall& c) {
      return CallSignature{0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), c.root * 64 + c.spec.code};
    },
    [](ShmCollectives& s, const HostCall& c) { s.reduce_chunks("reduce", c.out, c.numel, c.dtype, c.spec, c.root); },
    [](MultiHostCollectives& m, const HostCall& c) { m.reduce(c.out, c.numel, c.dtype, c.spec, c.root); }});

const CollectiveDef& kGather = register_collective({
    "gather", root_in_group, rooted,
    [](ShmCollectives& s, const HostCall& c) { s.gather_chunks("gather", c.in, c.out, bytes_of(c), c.root); },
    [](MultiHostCollectives& m, const HostCall& c) { m.gather(c.in, c.out, c.numel, c.dtype, c.root); }});

const CollectiveDef& kScatter = register_collective({
    "scatter", root_in_group, rooted,
    [](ShmCollectives& s, const HostCall& c) { s.scatter_chunks("scatter", c.in, c.out, bytes_of(c), c.root); },
    [](MultiHostCollectives& m, const HostCall& c) { m.scatter(c.in, c.out, c.numel, c.dtype, c.root); }});

// Sizes may differ per pair: the transport checks the whole size matrix.
const CollectiveDef& kAlltoall = register_collective({
    "all_to_all", nullptr, [](const HostCall& c) { return CallSignature{0, static_cast<int32_t>(c.dtype), -1, -1}; },
    [](ShmCollectives& s, const HostCall& c) {
      s.alltoall_chunks("all_to_all", c.send, c.send_bytes, c.recv, c.recv_bytes);
    },
    [](MultiHostCollectives& m, const HostCall& c) {
      m.alltoall(c.send, c.send_bytes, c.recv, c.recv_bytes, c.dtype);
    }});

}  // namespace torch_neuronx::dist
