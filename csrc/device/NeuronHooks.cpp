// at::PrivateUse1HooksInterface: availability, generators, pinned memory,
// device-from-pointer and storage resizing, as PyTorch's core asks of a device.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/Exception.h>

#include "memory/NeuronCachingAllocator.h"
#include "memory/NeuronHostAllocator.h"
#include "memory/NeuronStorage.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronGenerator.h"
#include "runtime/NeuronHal.h"

namespace torch_neuronx {
namespace {

struct NeuronHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count_ensure_non_zero_or_zero() > 0; }
  void init() const override { lazy_init(); }
  bool hasPrimaryContext(c10::DeviceIndex device) const override { return is_initialized(); }
  c10::DeviceIndex deviceCount() const override { return device_count_ensure_non_zero_or_zero(); }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_device(device); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override { return exchange_device(device); }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override { return exchange_device(device); }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override { return default_generator(device); }
  at::Generator getNewGenerator(c10::DeviceIndex device) const override { return make_generator(device); }

  bool isPinnedPtr(const void* data) const override { return is_pinned_ptr(data); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &host_allocator(); }

  at::Device getDeviceFromPtr(void* data) const override {
    int device = -1;
    NEURON_HAL_CHECK(hal().memory.device_of(data, &device));
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage.unsafeGetStorageImpl(), newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() { at::RegisterPrivateUse1HooksInterface(new NeuronHooks()); }
} g_register_hooks;

}  // namespace
}  // namespace torch_neuronx
