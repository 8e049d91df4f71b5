// The registry of collectives (Collectives.h): entries by id, and the one
// place a call enters a transport (run_collective).
#include "distributed/collectives/Collectives.h"

#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "distributed/multihost/MultiHostCollectives.h"
#include "distributed/onehost/ShmCollectives.h"

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

void run_collective(const CollectiveDef& def, const HostCall& call, ShmCollectives& host, MultiHostCollectives* hosts) {
  if (hosts == nullptr && def.eager != nullptr && def.eager(host, def, call)) return;
  if (hosts == nullptr && def.direct != nullptr && def.direct(host, def, call)) return;
  host.check_signature(def, def.signature(call));
  if (hosts != nullptr)
    def.across_hosts(*hosts, call);
  else
    def.on_one_host(host, call);
}

std::string collective_name(uint32_t id) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_id.find(id);
  return it == t.by_id.end() ? "unknown collective " + std::to_string(id) : it->second->name;
}

}  // namespace torch_neuronx::dist
