// Device memory for host kernels' allocations.
//
// The CPU allocator is wrapped (registered for kCPU above the default): while
// a DeviceOutputScope is active on a thread, CPU allocations on that thread
// come from the neuron caching allocator of the scope's device, so tensors a
// CPU kernel creates (outputs and temporaries) live in device memory, counted
// against the emulated HBM. Their DataPtrs still say CPU until adopt_storage()
// re-labels them. Outside a scope the default CPU allocator serves, unchanged.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/StorageImpl.h>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

class TORCH_NEURONX_API DeviceOutputScope {
 public:
  explicit DeviceOutputScope(c10::DeviceIndex device);
  ~DeviceOutputScope();
  DeviceOutputScope(const DeviceOutputScope&) = delete;
  DeviceOutputScope& operator=(const DeviceOutputScope&) = delete;

 private:
  c10::DeviceIndex previous_;
};

// The CPU allocator that serves scopes (for alias storages that may grow).
TORCH_NEURONX_API c10::Allocator* scoped_cpu_allocator();

// How many non-empty CPU allocations were served outside any scope (plain
// CPU memory): the OpInfo sweep compares a kernel's allocations on the CPU
// with its device allocations on neuron.
TORCH_NEURONX_API int64_t cpu_allocation_count();

// True if the storage's bytes were allocated by the neuron allocator.
TORCH_NEURONX_API bool is_device_memory(const c10::StorageImpl& storage);

// A neuron storage owning the bytes of a CPU storage whose memory is device
// memory (is_device_memory) or that has no bytes; the CPU storage is left empty.
TORCH_NEURONX_API c10::Storage adopt_storage(c10::StorageImpl& cpu_storage, c10::DeviceIndex device);

}  // namespace torch_neuronx
