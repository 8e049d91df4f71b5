// Pinned host memory for asynchronous copies: an at::HostAllocator over the
// HAL's host_alloc, caching freed blocks by power-of-two size. A block used by
// a queued copy (record_event) returns to the cache only once the copy ran.
// Registered for PrivateUse1 (pin_memory(), is_pinned(), torch.accelerator).
#pragma once

#include <ATen/core/CachingHostAllocator.h>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

TORCH_NEURONX_API at::HostAllocator& host_allocator();
// True if ptr lies in pinned memory of this runtime.
TORCH_NEURONX_API bool is_pinned_ptr(const void* ptr);

}  // namespace torch_neuronx
