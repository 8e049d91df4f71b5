// Who watches the caching allocator: torch.neuron.memory._record_memory_history
// (csrc/bindings/MemoryHistoryBindings.cpp) installs one hook and is told of
// every block and segment the allocator hands out or takes back, with
// CUDACachingAllocator's trace actions.
//
// Contract: the allocator calls notify() at each site; it costs one relaxed
// atomic load while no hook is set. kAlloc and kFreeRequested come from the
// thread that allocates or frees, outside the allocator's locks. kFreeCompleted,
// kSegmentAlloc and kSegmentFree come with the device cache's lock held: the
// hook must not call into the allocator then, nor wait for anything (the GIL)
// whose holder may be waiting for that lock.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/macros/Macros.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// A read-only copy of one segment and its blocks, in address order (memory snapshots).
struct SegmentInfo {
  enum class State : uint8_t { kAllocated, kPendingFree, kInactive };
  struct BlockInfo {
    void* ptr = nullptr;
    size_t size = 0, requested = 0;
    State state = State::kInactive;
  };
  c10::DeviceIndex device = 0;
  c10::StreamId stream = 0;
  bool small = false;
  void* address = nullptr;
  size_t total_size = 0;
  std::vector<BlockInfo> blocks;
};

namespace alloc_observer {

enum class Action : uint8_t {
  kAlloc,          // a block was handed out; size: the bytes asked for
  kFreeRequested,  // its storage died; size: the bytes asked for at allocation
  kFreeCompleted,  // it is back in the cache (at once, or once streams that used it passed)
  kSegmentAlloc,   // a segment came from the driver; size: the segment's bytes
  kSegmentFree,    // a fully free segment went back to the driver
};

using Hook = void (*)(Action action, void* ptr, size_t size, c10::DeviceIndex device, c10::StreamId stream);

TORCH_NEURONX_API extern std::atomic<Hook> g_hook;
// nullptr stops the calls (one already running may finish after).
TORCH_NEURONX_API void set_hook(Hook hook);

// True while a hook is set.
inline bool active() { return g_hook.load(std::memory_order_relaxed) != nullptr; }

inline void notify(Action action, void* ptr, size_t size, c10::DeviceIndex device, c10::StreamId stream) {
  if (C10_LIKELY(g_hook.load(std::memory_order_relaxed) == nullptr)) return;
  if (Hook h = g_hook.load(std::memory_order_acquire)) h(action, ptr, size, device, stream);
}

}  // namespace alloc_observer
}  // namespace torch_neuronx
