// The neuron device allocator: a c10::DeviceAllocator over one DeviceCache
// per device, registered for PrivateUse1. Allocations go to the current
// device and its current stream. It never takes the GIL.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <vector>

#include "memory/NeuronAllocatorObserver.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

class TORCH_NEURONX_API NeuronCachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, size_t count) const override;
  bool initialized() override;
  void emptyCache(c10::MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;

  // Allocates on an explicit device (its current stream).
  c10::DataPtr allocate_on(c10::DeviceIndex device, size_t nbytes);
  // True if ptr is the start of a live block of this allocator.
  bool owns(void* ptr);
  // Marks the block under data as exported to other processes (NeuronIpc.h);
  // false unless this allocator allocated it.
  bool mark_shared(const c10::DataPtr& data);
};

TORCH_NEURONX_API NeuronCachingAllocator& caching_allocator();

// Every device's segments and their blocks (none before the runtime starts).
TORCH_NEURONX_API std::vector<SegmentInfo> memory_segments();

}  // namespace torch_neuronx
