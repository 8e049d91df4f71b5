// Where a freed block of the DeviceCache goes (NeuronDeviceCache.h): to the
// short list of recently freed small blocks that the next allocation of the
// same size and stream takes first, to the pool, or, while other processes
// still map it, to the shared blocks' limbo.
#include "memory/NeuronDeviceCache.h"

#include "runtime/NeuronHal.h"

namespace torch_neuronx {
namespace {

int64_t peer_opens(const void* ptr) {
  int64_t n = 0;
  if (hal().ipc.open_count) NEURON_HAL_CHECK(hal().ipc.open_count(ptr, &n));
  return n;
}

}  // namespace

void DeviceCache::retire(Block* block) {
  // A forked child has no device mappings (they are not inherited) to read the count from.
  if (block->shared && !in_bad_fork() && peer_opens(block->ptr) > 0) {
    shared_.push_back(block);
    return;
  }
  block->shared = false;
  if (!block->small) {
    release_to_pool(block);
    return;
  }
  mark_inactive(block);
  if (recent_.size() == kRecent) {
    merge_into_pool(recent_.front());
    recent_.erase(recent_.begin());
  }
  recent_.push_back(block);
}

void DeviceCache::release_unshared() {
  for (size_t i = 0; i < shared_.size();) {
    Block* b = shared_[i];
    if (peer_opens(b->ptr) > 0) {
      ++i;
      continue;
    }
    shared_.erase(shared_.begin() + static_cast<std::ptrdiff_t>(i));
    b->shared = false;
    release_to_pool(b);
  }
}

Block* DeviceCache::take_recent(size_t size, c10::StreamId stream) {
  for (size_t i = recent_.size(); i-- > 0;) {  // newest first: its lines are likely cached
    Block* b = recent_[i];
    if (b->size == size && b->stream == stream) {
      recent_.erase(recent_.begin() + static_cast<std::ptrdiff_t>(i));
      return b;
    }
  }
  return nullptr;
}

void DeviceCache::flush_recent() {
  for (Block* b : recent_) merge_into_pool(b);
  recent_.clear();
}

bool DeviceCache::mark_shared(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  it->second->shared = true;
  return true;
}

}  // namespace torch_neuronx
