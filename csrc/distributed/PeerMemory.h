// Peers' device memory, mapped here for the collectives that read it in place
// (DirectCollectives.h). A rank describes where a buffer lives (the HAL's IPC
// handle of its allocation, plus its pid and the file's inode) and publishes
// that with its call; the others open the allocation's file through
// /proc/<pid>/fd and map it, once: mappings are kept for later calls, since
// the caching allocator hands out the same segments again.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace torch_neuronx::dist {

struct PeerBuffer {
  int32_t pid = 0;
  int32_t fd = -1;      // the owner's descriptor of the allocation; -1: not shareable
  uint64_t inode = 0;   // of that file, to check what /proc opened
  uint64_t size = 0;    // bytes of the allocation
  uint64_t offset = 0;  // of the buffer in it
};

// Where [ptr, ptr + bytes) lives, or fd -1 if it is not inside one allocation
// of shareable device memory (a staged host buffer, another driver).
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
    int32_t pid;
    uint64_t inode;
    char* base;
    uint64_t last_use;
  };
  std::vector<Entry> entries_;
  std::atomic<size_t> count_{0};
  uint64_t uses_ = 0;
};

}  // namespace torch_neuronx::dist
