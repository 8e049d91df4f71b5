#include "profiler/NeuronOpTracking.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "runtime/NeuronSettings.h"

namespace torch_neuronx {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<OpCounter*> counters;
  std::map<std::string, int64_t> fallbacks;
  std::set<std::string> warned;
  std::atomic<int> warn{-1};  // -1: TORCH_NEURONX_FALLBACK_WARN not read yet (counters register at load)
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

}  // namespace

OpCounter::OpCounter(const char* name) : name_(name) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().counters.push_back(this);
}

void record_host_dispatch(const c10::OperatorHandle& op) {
  // One counter per operator, found through a per-thread cache keyed by the
  // schema's address (stable for a registered operator).
  thread_local std::unordered_map<const void*, OpCounter*> cache;
  const void* key = &op.schema();
  auto it = cache.find(key);
  if (C10_UNLIKELY(it == cache.end())) {
    static std::mutex mu;
    static std::unordered_map<const void*, OpCounter*> shared;
    std::lock_guard<std::mutex> lock(mu);
    OpCounter*& c = shared[key];
    if (!c) c = new OpCounter((new std::string(c10::toString(op.schema().operator_name())))->c_str());
    it = cache.emplace(key, c).first;
  }
  it->second->hit();
}

void record_fallback(const std::string& op) {
  Registry& r = registry();
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.fallbacks[op]++;
    first = r.warned.insert(op).second;
  }
  if (strict::active()) strict::report("fallback", op, "runs on the host CPU with copies of its arguments");
  if (first && fallback_warnings_enabled()) {
    TORCH_WARN("neuron: '", op,
               "' has no native kernel yet and runs on the CPU with copies of its arguments "
               "(see torch_neuronx.get_fallback_ops()). Shown once per op; silence with "
               "TORCH_NEURONX_FALLBACK_WARN=0.");
  }
}

std::map<std::string, int64_t> fallback_ops() {
  std::lock_guard<std::mutex> lock(registry().mu);
  return registry().fallbacks;
}

std::map<std::string, int64_t> executed_ops() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::map<std::string, int64_t> out = r.fallbacks;
  for (OpCounter* c : r.counters) {
    if (c->count() > 0) out[c->name()] += c->count();
  }
  return out;
}

void clear_op_tracking() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.fallbacks.clear();
  r.warned.clear();
  for (OpCounter* c : r.counters) c->reset();
}

void set_fallback_warnings(bool enabled) { registry().warn.store(enabled ? 1 : 0); }
bool fallback_warnings_enabled() {
  Registry& r = registry();
  if (r.warn.load() < 0) r.warn.store(env_flag("TORCH_NEURONX_FALLBACK_WARN", true) ? 1 : 0);
  return r.warn.load() != 0;
}

}  // namespace torch_neuronx
