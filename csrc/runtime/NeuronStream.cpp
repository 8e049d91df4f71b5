#include "runtime/NeuronStream.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <c10/util/Exception.h>

#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"

namespace torch_neuronx {
namespace {

constexpr int kStreamsPerDevice = 1 + 2 * kStreamPoolSize;

struct DeviceStreams {
  std::array<std::atomic<nhal_stream>, kStreamsPerDevice> handles{};
  std::atomic<uint32_t> next_normal{0};
  std::atomic<uint32_t> next_high{0};
  std::mutex create_mutex;
};

std::vector<std::unique_ptr<DeviceStreams>>& devices() {
  static auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<DeviceStreams>>();
    for (int i = 0; i < device_count(); ++i) v->push_back(std::make_unique<DeviceStreams>());
    return v;
  }();
  return *all;
}

thread_local std::array<c10::StreamId, kMaxNeuronDevices> t_current{};

c10::Stream make(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
}

}  // namespace

c10::Stream default_stream(c10::DeviceIndex device) { return make(resolve_device(device), 0); }

c10::Stream current_stream(c10::DeviceIndex device) {
  device = resolve_device(device);
  return make(device, t_current[device]);
}

c10::Stream current_stream_of_valid(c10::DeviceIndex device) { return make(device, t_current[device]); }

c10::Stream exchange_stream(c10::Stream s) {
  hal_stream(s);  // validates device and id
  c10::Stream prev = make(s.device_index(), t_current[s.device_index()]);
  t_current[s.device_index()] = s.id();
  return prev;
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  device = resolve_device(device);
  DeviceStreams& d = *devices()[device];
  uint32_t slot = (high_priority ? d.next_high++ : d.next_normal++) % kStreamPoolSize;
  return make(device, 1 + slot + (high_priority ? kStreamPoolSize : 0));
}

int stream_priority(c10::Stream s) { return s.id() > kStreamPoolSize ? -1 : 0; }

nhal_stream hal_stream(c10::Stream s) {
  TORCH_CHECK(s.device_type() == c10::DeviceType::PrivateUse1, "expected a neuron stream, got ", s);
  c10::DeviceIndex device = resolve_device(s.device_index());
  TORCH_CHECK(s.id() >= 0 && s.id() < kStreamsPerDevice, "unknown neuron stream id ", s.id(),
              " on neuron:", static_cast<int>(device));
  DeviceStreams& d = *devices()[device];
  check_not_bad_fork();
  nhal_stream h = d.handles[s.id()].load(std::memory_order_acquire);
  if (C10_LIKELY(h != nullptr)) return h;
  lazy_init();
  std::lock_guard<std::mutex> lock(d.create_mutex);
  h = d.handles[s.id()].load();
  if (!h) {
    NEURON_HAL_CHECK(hal().stream.create(device, stream_priority(s), &h));
    d.handles[s.id()].store(h, std::memory_order_release);
  }
  return h;
}

void synchronize_stream(c10::Stream s) { NEURON_HAL_CHECK(hal().stream.synchronize(hal_stream(s))); }

bool query_stream(c10::Stream s) {
  nhal_status st = hal().stream.query(hal_stream(s));
  if (st == NHAL_STATUS_NOT_READY) return false;
  NEURON_HAL_CHECK(st);
  return true;
}

}  // namespace torch_neuronx
