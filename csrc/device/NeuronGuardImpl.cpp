// c10::impl::DeviceGuardImplInterface for PrivateUse1: device and stream
// switching, events (HAL events created on first record), synchronization.
// It backs torch.Stream, torch.Event, DeviceGuard and most of torch.accelerator.
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

struct NeuronGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected a neuron device, got ", d);
    return c10::Device(kType, exchange_device(d.index()));
  }
  c10::Device getDevice() const override { return c10::Device(kType, current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected a neuron device, got ", d);
    set_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (is_current_device(d.index())) return;  // every guard's release, on the per-op path
    try {
      set_device(d.index());
    } catch (...) {
    }
  }

  c10::Stream getStream(c10::Device d) const override { return current_stream(d.index()); }
  c10::Stream getDefaultStream(c10::Device d) const override { return default_stream(d.index()); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override {
    return stream_from_pool(d.index(), high_priority);
  }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return stream_from_pool(d.index(), priority < 0);
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return exchange_stream(s); }
  void* getStreamNativeHandle(const c10::Stream s) const override { return hal_stream(s); }

  c10::DeviceIndex deviceCount() const noexcept override { return device_count_ensure_non_zero_or_zero(); }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "event device index ",
                static_cast<int>(device_index), " does not match the recording stream's device ",
                static_cast<int>(stream.device_index()));
    if (!*event) {
      nhal_event e = nullptr;
      unsigned flags = flag == c10::EventFlag::BACKEND_DEFAULT ? NHAL_EVENT_ENABLE_TIMING : 0u;
      NEURON_HAL_CHECK(hal().event.create(flags, &e));
      *event = e;
    }
    NEURON_HAL_CHECK(hal().event.record(static_cast<nhal_event>(*event), hal_stream(stream)));
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;  // never recorded: nothing to wait for
    NEURON_HAL_CHECK(hal().event.stream_wait(hal_stream(stream), static_cast<nhal_event>(event)));
  }

  bool queryEvent(void* event) const override {
    if (!event) return true;
    nhal_status st = hal().event.query(static_cast<nhal_event>(event));
    if (st == NHAL_STATUS_NOT_READY) return false;
    NEURON_HAL_CHECK(st);
    return true;
  }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    if (event && is_initialized()) hal().event.destroy(static_cast<nhal_event>(event));
  }

  void synchronizeEvent(void* event) const override {
    if (event) NEURON_HAL_CHECK(hal().event.synchronize(static_cast<nhal_event>(event)));
  }

  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "elapsed_time needs both events recorded first");
    float ms = 0;
    NEURON_HAL_CHECK(hal().event.elapsed_ms(static_cast<nhal_event>(start), static_cast<nhal_event>(end), &ms));
    return ms;
  }

  bool queryStream(const c10::Stream& s) const override { return query_stream(s); }
  void synchronizeStream(const c10::Stream& s) const override { synchronize_stream(s); }
  void synchronizeDevice(const c10::DeviceIndex device) const override {
    NEURON_HAL_CHECK(hal().device.synchronize(resolve_device(device)));
  }
  void recordDataPtrOnStream(const c10::DataPtr& ptr, const c10::Stream& s) const override {
    caching_allocator().recordStream(ptr, s);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NeuronGuardImpl);

}  // namespace
}  // namespace torch_neuronx
