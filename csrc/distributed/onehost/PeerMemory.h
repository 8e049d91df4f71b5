// Peers' device memory, mapped here for the collectives that read it in place
// (DirectCollectives.h). A rank describes where a buffer lives (the HAL's IPC
// handle of its allocation) and publishes that with its call; the others open
// the handle through the HAL and map it, once: mappings are kept for later
// calls, since the caching allocator hands out the same segments again.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "neuron_hal/ipc.h"

namespace torch_neuronx::dist {

struct PeerBuffer {
  bool shareable = false;    // false: not inside shareable device memory
  nhal_ipc_handle handle{};  // of the allocation; handle.offset is the buffer's
};

// Where [ptr, ptr + bytes) lives; not shareable if it is not inside one
// allocation of shareable device memory (a staged host buffer, another driver).
PeerBuffer describe_buffer(const void* ptr, size_t bytes);

// One process group's mappings of its peers' allocations, least recently
// used out past kMaxMappings. A kept mapping holds the allocation's pages
// after its owner freed it, until it is evicted or the group is destroyed.
class PeerMappings {
 public:
  static constexpr size_t kMaxMappings = 64;
  PeerMappings() = default;
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;
  ~PeerMappings();

  // The address of b's buffer in this process, or nullptr if it cannot be
  // mapped (the owner exited, descriptors or address space ran out).
  const char* map(const PeerBuffer& b);
  // Mappings kept; any thread may ask (map() runs on the group's worker).
  size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    nhal_ipc_handle handle;  // offset 0: names the allocation
    char* base;
    uint64_t last_use;
  };
  std::vector<Entry> entries_;
  std::atomic<size_t> count_{0};
  uint64_t uses_ = 0;
};

}  // namespace torch_neuronx::dist
