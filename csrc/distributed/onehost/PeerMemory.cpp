#include "distributed/onehost/PeerMemory.h"

#include <algorithm>
#include <cstring>

#include "runtime/NeuronHal.h"

namespace torch_neuronx::dist {
namespace {

// The handle with its offset cleared: equal for every buffer of one allocation.
nhal_ipc_handle allocation_of(const nhal_ipc_handle& h) {
  nhal_ipc_handle a = h;
  a.offset = 0;
  return a;
}

bool same(const nhal_ipc_handle& a, const nhal_ipc_handle& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

}  // namespace

PeerBuffer describe_buffer(const void* ptr, size_t bytes) {
  PeerBuffer b;
  nhal_ipc_handle h{};
  if (!ptr || !hal().ipc.export_handle || hal().ipc.export_handle(ptr, /*count_open=*/0, &h) != NHAL_STATUS_OK) {
    return b;
  }
  if (h.offset + bytes > h.size) return b;
  b.shareable = true;
  b.handle = h;
  return b;
}

PeerMappings::~PeerMappings() {
  for (const Entry& e : entries_) hal().ipc.close_handle(e.base, /*end_open=*/0);
}

const char* PeerMappings::map(const PeerBuffer& b) {
  ++uses_;
  const nhal_ipc_handle key = allocation_of(b.handle);
  for (Entry& e : entries_) {
    if (same(e.handle, key)) {
      e.last_use = uses_;
      return e.base + b.handle.offset;
    }
  }
  if (entries_.size() >= kMaxMappings) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& x, const Entry& y) { return x.last_use < y.last_use; });
    hal().ipc.close_handle(oldest->base, /*end_open=*/0);
    entries_.erase(oldest);
  }
  void* base = nullptr;
  if (hal().ipc.open_handle(/*device=*/-1, &key, &base) != NHAL_STATUS_OK) return nullptr;
  entries_.push_back({key, static_cast<char*>(base), uses_});
  count_.store(entries_.size(), std::memory_order_relaxed);
  return static_cast<char*>(base) + b.handle.offset;
}

}  // namespace torch_neuronx::dist
