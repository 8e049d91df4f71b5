#include "memory/NeuronCachingAllocator.h"

#include <c10/util/Exception.h>

#include <iterator>
#include <memory>
#include <vector>

#include "memory/NeuronAllocatorObserver.h"
#include "memory/NeuronDeviceCache.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

std::vector<std::unique_ptr<DeviceCache>>& caches() {
  static auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<DeviceCache>>();
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) v->push_back(std::make_unique<DeviceCache>(i));
    return v;
  }();
  return *all;
}

DeviceCache& cache(c10::DeviceIndex device) { return *caches()[resolve_device(device)]; }

// torch.profiler(profile_memory=True): each allocation (size > 0) and free
// (size < 0) with the device's totals afterwards.
void report_to_profiler(DeviceCache& c, void* ptr, int64_t size, c10::DeviceIndex device) {
  if (C10_LIKELY(!c10::memoryProfilingEnabled())) return;
  const auto stats = c.stats();
  const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  c10::reportMemoryUsageToProfiler(ptr, size, stats.allocated_bytes[all].current, stats.reserved_bytes[all].current,
                                   c10::Device(c10::DeviceType::PrivateUse1, device));
}

// The DataPtr context is the data pointer itself (as for CUDA), so that
// Allocator::raw_allocate works; frees look the block up by pointer.
void raw_delete(void* ptr) {
  if (!ptr) return;
  if (C10_LIKELY(!alloc_observer::active())) {  // nobody to tell before the free: one lookup
    for (auto& c : caches()) {
      size_t size = 0;
      if (c->free_ptr(ptr, &size)) {
        report_to_profiler(*c, ptr, -static_cast<int64_t>(size), c->device());
        return;
      }
    }
    TORCH_CHECK(false, "neuron allocator: ", ptr, " was not allocated by it (double free?)");
  }
  for (auto& c : caches()) {
    if (Block* b = c->find_allocated(ptr)) {
      const int64_t size = static_cast<int64_t>(b->size);
      const c10::DeviceIndex device = b->device;
      alloc_observer::notify(alloc_observer::Action::kFreeRequested, ptr, b->requested, device, b->stream);
      c->free(b);
      report_to_profiler(*c, ptr, -size, device);
      return;
    }
  }
  TORCH_CHECK(false, "neuron allocator: ", ptr, " was not allocated by it (double free?)");
}

}  // namespace

c10::DataPtr NeuronCachingAllocator::allocate_on(c10::DeviceIndex device, size_t nbytes) {
  lazy_init();
  device = resolve_device(device);  // validated once for the whole path
  const c10::Device dev(c10::DeviceType::PrivateUse1, device);
  if (nbytes == 0) return c10::DataPtr(nullptr, nullptr, &raw_delete, dev);
  const c10::Stream stream = current_stream_of_valid(device);
  DeviceCache& c = *caches()[device];
  Block* b = c.malloc(nbytes, stream);
  report_to_profiler(c, b->ptr, static_cast<int64_t>(b->size), device);
  alloc_observer::notify(alloc_observer::Action::kAlloc, b->ptr, nbytes, device, stream.id());
  return c10::DataPtr(b->ptr, b->ptr, &raw_delete, dev);
}

c10::DataPtr NeuronCachingAllocator::allocate(size_t nbytes) { return allocate_on(current_device(), nbytes); }

c10::DeleterFnPtr NeuronCachingAllocator::raw_deleter() const { return &raw_delete; }

bool NeuronCachingAllocator::owns(void* ptr) {
  if (!ptr || !is_initialized()) return false;
  for (auto& c : caches()) {
    if (c->find_allocated(ptr)) return true;
  }
  return false;
}

bool NeuronCachingAllocator::mark_shared(const c10::DataPtr& data) {
  if (!data.get() || data.get_deleter() != &raw_delete) return false;
  return cache(data.device().index()).mark_shared(data.get());
}

void NeuronCachingAllocator::copy_data(void* dest, const void* src, size_t count) const {
  c10::Stream s = current_stream();
  NEURON_HAL_CHECK(hal().memory.copy(hal_stream(s), dest, src, count, NHAL_COPY_DEVICE_TO_DEVICE));
  synchronize_stream(s);
}

bool NeuronCachingAllocator::initialized() { return is_initialized(); }

void NeuronCachingAllocator::emptyCache(c10::MempoolId_t) {
  if (!is_initialized()) return;
  for (auto& c : caches()) c->empty_cache();
}

void NeuronCachingAllocator::recordStream(const c10::DataPtr& ptr, c10::Stream stream) {
  if (!ptr.get() || ptr.get_deleter() != &raw_delete) return;
  DeviceCache& c = cache(ptr.device().index());
  if (Block* b = c.find_allocated(ptr.get())) c.record_stream(b, stream);
}

c10::CachingDeviceAllocator::DeviceStats NeuronCachingAllocator::getDeviceStats(c10::DeviceIndex device) {
  return cache(device).stats();
}

void NeuronCachingAllocator::resetAccumulatedStats(c10::DeviceIndex device) { cache(device).reset_accumulated(); }

void NeuronCachingAllocator::resetPeakStats(c10::DeviceIndex device) { cache(device).reset_peak(); }

std::pair<size_t, size_t> NeuronCachingAllocator::getMemoryInfo(c10::DeviceIndex device) {
  uint64_t free_bytes = 0, total = 0;
  NEURON_HAL_CHECK(hal().device.get_memory_info(resolve_device(device), &free_bytes, &total));
  return {free_bytes, total};
}

std::vector<SegmentInfo> memory_segments() {
  std::vector<SegmentInfo> out;
  if (!is_initialized()) return out;
  for (auto& c : caches()) {
    std::vector<SegmentInfo> s = c->segments();
    out.insert(out.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
  }
  return out;
}

namespace alloc_observer {
std::atomic<Hook> g_hook{nullptr};
void set_hook(Hook hook) { g_hook.store(hook, std::memory_order_release); }
}  // namespace alloc_observer

NeuronCachingAllocator& caching_allocator() {
  static NeuronCachingAllocator allocator;
  return allocator;
}

namespace {
// Registered at load; the runtime itself starts on the first allocation.
struct RegisterCachingAllocator {
  RegisterCachingAllocator() { c10::SetAllocator(c10::DeviceType::PrivateUse1, &caching_allocator()); }
} g_register_caching_allocator;
}  // namespace

}  // namespace torch_neuronx
