#include "memory/NeuronStorage.h"

#include <c10/util/Exception.h>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {

void resize_storage_bytes(c10::StorageImpl* storage, size_t new_bytes) {
  TORCH_CHECK(storage->resizable(), "Trying to resize storage that is not resizable");
  const c10::DeviceIndex device = storage->device().index();
  c10::DataPtr fresh = caching_allocator().allocate_on(device, new_bytes);
  const size_t keep = std::min(storage->nbytes(), new_bytes);
  if (keep > 0 && storage->data() != nullptr) {
    c10::Stream s = current_stream(device);
    NEURON_HAL_CHECK(hal().memory.copy(hal_stream(s), fresh.get(), storage->data(), keep, NHAL_COPY_DEVICE_TO_DEVICE));
  }
  storage->set_data_ptr_noswap(std::move(fresh));
  storage->set_nbytes(new_bytes);
}

}  // namespace torch_neuronx
