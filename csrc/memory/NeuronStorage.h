// Storage resizing on the device (storage.resize_(), Tensor.resize_ growth):
// a new block from the caching allocator, the old bytes copied over on the
// current stream, the rest left uninitialized.
#pragma once

#include <c10/core/StorageImpl.h>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

TORCH_NEURONX_API void resize_storage_bytes(c10::StorageImpl* storage, size_t new_bytes);

}  // namespace torch_neuronx
