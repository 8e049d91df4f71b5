#include "memory/NeuronHostAllocator.h"

#include <c10/util/Exception.h>
#include <c10/util/llvmMathExtras.h>

#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

struct HostBlock {
  void* ptr = nullptr;
  size_t size = 0;
  std::vector<nhal_event> events;  // queued copies still using the block
};

class NeuronHostAllocator final : public at::HostAllocator {
 public:
  at::DataPtr allocate(size_t n) override {
    if (n == 0) return at::DataPtr(nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU));
    lazy_init();
    size_t size = c10::llvm::PowerOf2Ceil(std::max<size_t>(n, 4096));
    std::lock_guard<std::mutex> lock(mu_);
    collect_completed();
    HostBlock* block = nullptr;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
    } else {
      void* ptr = nullptr;
      NEURON_HAL_CHECK(hal().memory.host_alloc(size, &ptr));
      block = new HostBlock{ptr, size, {}};
      stats_.allocations.increase(1);
      stats_.allocated_bytes.increase(size);
      stats_.num_host_alloc++;
    }
    live_[block->ptr] = block;
    stats_.active_requests.increase(1);
    stats_.active_bytes.increase(size);
    return at::DataPtr(block->ptr, block, &release, c10::Device(c10::DeviceType::CPU));
  }

  bool record_event(void* ptr, void* ctx, c10::Stream stream) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end() || it->second != ctx) return false;
    nhal_event e = nullptr;
    NEURON_HAL_CHECK(hal().event.create(0, &e));
    NEURON_HAL_CHECK(hal().event.record(e, hal_stream(stream)));
    it->second->events.push_back(e);
    return true;
  }

  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    for (HostBlock* b : pending_) {
      for (nhal_event e : b->events) {
        hal().event.synchronize(e);
        hal().event.destroy(e);
      }
      b->events.clear();
      free_[b->size].push_back(b);
    }
    pending_.clear();
    for (auto& [size, blocks] : free_) {
      for (HostBlock* b : blocks) {
        hal().memory.host_free(b->ptr);
        stats_.allocations.decrease(1);
        stats_.allocated_bytes.decrease(b->size);
        stats_.num_host_free++;
        delete b;
      }
    }
    free_.clear();
  }

  void copy_data(void* dest, const void* src, size_t count) const override { std::memcpy(dest, src, count); }

  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto* s : {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes}) {
      s->reset_accumulated();
    }
  }
  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto* s : {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes}) {
      s->reset_peak();
    }
  }

  void free_block(HostBlock* block) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(block->ptr);
    stats_.active_requests.decrease(1);
    stats_.active_bytes.decrease(block->size);
    if (block->events.empty())
      free_[block->size].push_back(block);
    else
      pending_.push_back(block);
  }

 private:
  static void release(void* ctx);

  void collect_completed() {
    for (size_t i = 0; i < pending_.size();) {
      HostBlock* b = pending_[i];
      bool done = true;
      for (nhal_event e : b->events) done = done && hal().event.query(e) == NHAL_STATUS_OK;
      if (!done) {
        ++i;
        continue;
      }
      for (nhal_event e : b->events) hal().event.destroy(e);
      b->events.clear();
      free_[b->size].push_back(b);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  std::mutex mu_;
  std::map<size_t, std::vector<HostBlock*>> free_;
  std::vector<HostBlock*> pending_;
  std::unordered_map<void*, HostBlock*> live_;
  at::HostStats stats_;
};

// Never destroyed, as c10's own allocators: a pinned block freed during exit
// (a tensor outliving static destructors) must find the allocator alive, and
// its cached blocks stay reachable rather than leaked (LeakSanitizer).
NeuronHostAllocator& instance() {
  static auto* allocator = new NeuronHostAllocator();
  return *allocator;
}

void NeuronHostAllocator::release(void* ctx) {
  if (ctx) instance().free_block(static_cast<HostBlock*>(ctx));
}

struct RegisterHostAllocator {
  RegisterHostAllocator() { at::setHostAllocator(at::kPrivateUse1, &instance()); }
} g_register_host_allocator;

}  // namespace

at::HostAllocator& host_allocator() { return instance(); }

bool is_pinned_ptr(const void* ptr) {
  if (!ptr || !is_initialized()) return false;
  const nhal_driver& d = hal();
  return d.memory.host_is_pinned && d.memory.host_is_pinned(ptr) != 0;
}

}  // namespace torch_neuronx
