#include "memory/NeuronIpc.h"

#include <c10/util/Exception.h>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"

namespace torch_neuronx {
namespace {

// The receiver's DataPtr context: the mapping's base, which close_handle takes.
void close_mapping(void* base) { NEURON_HAL_CHECK(hal().ipc.close_handle(base, /*end_open=*/1)); }

void check_supported() {
  TORCH_CHECK(hal().ipc.export_handle && hal().ipc.open_handle, "the neuron driver '", hal().name,
              "' cannot share device memory between processes; send tensor.cpu() instead");
}

}  // namespace

IpcHandle export_storage(const c10::Storage& storage) {
  lazy_init();
  check_supported();
  const c10::Device device = storage.device();
  TORCH_CHECK(device.type() == c10::DeviceType::PrivateUse1, "export_storage: a ", device, " storage is not neuron's");
  void* ptr = storage.data_ptr().get();
  TORCH_CHECK(ptr, "export_storage: an empty storage has no memory to share");
  TORCH_CHECK(caching_allocator().mark_shared(storage.data_ptr()),
              "cannot share this neuron storage with another process: its memory was not allocated "
              "by this process's neuron allocator (a tensor received from another process cannot "
              "be sent on; send tensor.clone())");
  NEURON_HAL_CHECK(hal().device.synchronize(device.index()));
  IpcHandle h{};
  NEURON_HAL_CHECK(hal().ipc.export_handle(ptr, /*count_open=*/1, &h));
  return h;
}

c10::Storage open_storage(c10::DeviceIndex device, const IpcHandle& handle, size_t nbytes) {
  lazy_init();
  check_supported();
  check_device_index(device);
  TORCH_CHECK(handle.offset + nbytes <= handle.size, "a shared neuron storage of ", nbytes, " bytes at offset ",
              handle.offset, " does not fit the ", handle.size, "-byte allocation it was sent from");
  void* base = nullptr;
  NEURON_HAL_CHECK(hal().ipc.open_handle(device, &handle, &base));
  c10::DataPtr data(static_cast<char*>(base) + handle.offset, base, &close_mapping,
                    c10::Device(c10::DeviceType::PrivateUse1, device));
  return c10::Storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), /*allocator=*/nullptr,
                      /*resizable=*/false);
}

}  // namespace torch_neuronx
