#include "dispatch/NeuronOutputScope.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <atomic>

#include "memory/NeuronCachingAllocator.h"

namespace torch_neuronx {
namespace {

thread_local c10::DeviceIndex t_scope_device = -1;
std::atomic<int64_t> g_cpu_allocations{0};

// Frees a scoped block: neuron memory by pointer, labelled CPU.
void free_device_block(void* ptr) {
  if (ptr) caching_allocator().raw_deleter()(ptr);
}

class ScopedCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    if (C10_LIKELY(t_scope_device < 0)) {
      if (n > 0) g_cpu_allocations.fetch_add(1, std::memory_order_relaxed);
      return fallback()->allocate(n);
    }
    c10::DataPtr p = caching_allocator().allocate_on(t_scope_device, n);
    void* ptr = p.release_context();  // context == pointer for the neuron allocator
    return c10::DataPtr(ptr, ptr, ptr ? &free_device_block : nullptr, c10::Device(c10::kCPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return &raw_free; }
  void copy_data(void* dest, const void* src, size_t count) const override { std::memcpy(dest, src, count); }

  static c10::Allocator* fallback() {
    static c10::Allocator* def = c10::GetDefaultCPUAllocator();
    return def;
  }

  // Raw frees arrive without their scope: device blocks are told apart by lookup.
  static void raw_free(void* ptr) {
    if (caching_allocator().owns(ptr))
      free_device_block(ptr);
    else
      fallback()->raw_deleter()(ptr);
  }
};

ScopedCpuAllocator g_scoped;

struct RegisterScopedCpuAllocator {
  // Priority 1: above the default CPU allocator, below profilers that wrap it.
  RegisterScopedCpuAllocator() { c10::SetAllocator(c10::kCPU, &g_scoped, 1); }
} g_register_scoped_cpu_allocator;

}  // namespace

DeviceOutputScope::DeviceOutputScope(c10::DeviceIndex device) : previous_(t_scope_device) { t_scope_device = device; }
DeviceOutputScope::~DeviceOutputScope() { t_scope_device = previous_; }

c10::Allocator* scoped_cpu_allocator() { return &g_scoped; }

int64_t cpu_allocation_count() { return g_cpu_allocations.load(std::memory_order_relaxed); }

bool is_device_memory(const c10::StorageImpl& storage) {
  return storage.data_ptr().get_deleter() == &free_device_block;
}

c10::Storage adopt_storage(c10::StorageImpl& cpu_storage, c10::DeviceIndex device) {
  TORCH_INTERNAL_ASSERT(is_device_memory(cpu_storage) || cpu_storage.nbytes() == 0);
  const size_t nbytes = cpu_storage.nbytes();
  c10::DataPtr moved = cpu_storage.set_data_ptr(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
  void* ptr = moved.release_context();
  c10::DataPtr neuron(ptr, ptr, caching_allocator().raw_deleter(), c10::Device(c10::DeviceType::PrivateUse1, device));
  cpu_storage.set_nbytes(0);
  return c10::Storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes,
                                                            std::move(neuron), &caching_allocator(), true));
}

}  // namespace torch_neuronx
