// The per-device block cache behind the caching allocator.
//
// Requests are rounded to 512 bytes. Requests up to 1 MiB are cut from 2 MiB
// segments (the small pool); larger ones from segments rounded to 2 MiB (the
// large pool). A free block is reusable only by allocations on the stream it
// was allocated on; a block that other streams used (record_stream) returns
// to the cache only after events recorded on those streams complete.
// Small blocks freed without other streams' uses wait, unmerged, in a short
// list that malloc searches first for the same stream and size: the common
// free-then-allocate-alike of eager ops skips the pool's tree and the
// split/merge. Anything that inspects or releases the pools flushes it first.
// A block shared with other processes (torch.multiprocessing) returns to the
// cache only once every peer has closed it. Adjacent free blocks of a segment merge. When the device is full, fully
// free segments are released and the request retried before raising
// torch.OutOfMemoryError. Mirrors CUDACachingAllocator's DeviceCachingAllocator.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Stream.h>
#include <c10/util/flat_hash_map.h>

#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "memory/NeuronAllocatorObserver.h"
#include "neuron_hal/event.h"

namespace torch_neuronx {

struct Block {
  c10::DeviceIndex device = 0;
  c10::StreamId stream = 0;  // the stream it was allocated on
  size_t size = 0;           // bytes in this block (rounded)
  size_t requested = 0;      // bytes the caller asked for
  void* ptr = nullptr;
  Block* prev = nullptr;  // neighbours within the segment
  Block* next = nullptr;
  bool allocated = false;
  bool small = false;             // belongs to the small pool
  bool shared = false;            // exported to other processes (hal ipc)
  std::vector<c10::Stream> uses;  // other streams recorded with record_stream
};

class DeviceCache {
 public:
  using DeviceStats = c10::CachingDeviceAllocator::DeviceStats;
  explicit DeviceCache(c10::DeviceIndex device) : device_(device) {}
  c10::DeviceIndex device() const { return device_; }

  // Never returns null for size > 0; throws torch.OutOfMemoryError.
  Block* malloc(size_t size, c10::Stream stream);
  void free(Block* block);
  // Frees the live block starting at ptr, if there is one (its size in
  // *size): find and free under one lock, for callers with no observer to tell first.
  bool free_ptr(void* ptr, size_t* size);
  void record_stream(Block* block, c10::Stream stream);
  // Marks the live block starting at ptr as exported; false if there is none.
  bool mark_shared(void* ptr);
  // Releases every fully free segment to the driver.
  void empty_cache();
  Block* find_allocated(void* ptr);
  std::vector<SegmentInfo> segments();

  DeviceStats stats();
  void reset_accumulated();
  void reset_peak();

 private:
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockLess>;

  Pool& pool_for(bool small) { return small ? small_free_ : large_free_; }
  Block* take_free_block(size_t size, c10::StreamId stream, bool small);
  Block* new_segment(size_t size, c10::StreamId stream, bool small, size_t request);
  void split(Block* block, size_t size);
  void release_to_pool(Block* block);
  void free_locked(Block* block);
  void retire(Block* block);         // to the pool, or to shared_ while peers map it
  void release_unshared();           // shared_ blocks no peer maps any more, to the pool
  void mark_inactive(Block* block);  // free: observers told, active stats lowered
  void merge_into_pool(Block* block);
  Block* take_recent(size_t size, c10::StreamId stream);
  void flush_recent();
  void process_pending(bool wait);
  void release_free_segments();
  void update_inactive_split();
  void for_each_stat(
      const std::function<void(c10::CachingAllocator::Stat&)>& fn);  // recomputed on stats(), off the hot path

  const c10::DeviceIndex device_;
  std::mutex mu_;
  Pool small_free_, large_free_;
  ska::flat_hash_map<void*, Block*> live_;
  std::vector<std::pair<Block*, std::vector<nhal_event>>> pending_;
  std::vector<Block*> shared_;  // freed here, still open in other processes
  static constexpr size_t kRecent = 16;
  std::vector<Block*> recent_;  // free small blocks not yet merged, oldest first
  DeviceStats stats_;
};

}  // namespace torch_neuronx
