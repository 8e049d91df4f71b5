#include "memory/NeuronDeviceCache.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

#include "memory/NeuronAllocatorObserver.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

constexpr size_t kMinBlock = 512;
constexpr size_t kSmallLimit = 1 << 20;  // requests up to this use the small pool
constexpr size_t kSmallSegment = 2 << 20;
constexpr size_t kLargeRound = 2 << 20;
constexpr size_t kLargeSplitRemainder = 1 << 20;

using c10::CachingAllocator::StatType;

size_t round_size(size_t n) { return n < kMinBlock ? kMinBlock : (n + kMinBlock - 1) / kMinBlock * kMinBlock; }

template <typename Fn>
void for_pool(c10::CachingAllocator::StatArray& a, bool small, Fn fn) {
  fn(a[static_cast<size_t>(StatType::AGGREGATE)]);
  fn(a[static_cast<size_t>(small ? StatType::SMALL_POOL : StatType::LARGE_POOL)]);
}

std::string bytes(uint64_t n) {
  char buf[64];
  if (n >= (1ull << 30))
    snprintf(buf, sizeof(buf), "%.2f GiB", n / double(1ull << 30));
  else if (n >= (1ull << 20))
    snprintf(buf, sizeof(buf), "%.2f MiB", n / double(1ull << 20));
  else
    snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace

bool DeviceCache::BlockLess::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

Block* DeviceCache::malloc(size_t request, c10::Stream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.empty() || !shared_.empty()) process_pending(/*wait=*/false);
  const size_t size = round_size(request);
  const bool small = size <= kSmallLimit;
  Block* block = small ? take_recent(size, stream.id()) : nullptr;
  if (!block) block = take_free_block(size, stream.id(), small);
  if (!block && !recent_.empty()) {  // merged, they may hold the room a new segment would
    flush_recent();
    block = take_free_block(size, stream.id(), small);
  }
  if (!block) {
    const size_t segment = small ? kSmallSegment : (size + kLargeRound - 1) / kLargeRound * kLargeRound;
    block = new_segment(segment, stream.id(), small, request);
  }
  split(block, size);
  block->allocated = true;
  block->requested = request;
  live_[block->ptr] = block;
  for_pool(stats_.allocation, small, [](auto& s) { s.increase(1); });
  for_pool(stats_.allocated_bytes, small, [&](auto& s) { s.increase(block->size); });
  for_pool(stats_.active, small, [](auto& s) { s.increase(1); });
  for_pool(stats_.active_bytes, small, [&](auto& s) { s.increase(block->size); });
  for_pool(stats_.requested_bytes, small, [&](auto& s) { s.increase(request); });
  return block;
}

Block* DeviceCache::take_free_block(size_t size, c10::StreamId stream, bool small) {
  Pool& pool = pool_for(small);
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

Block* DeviceCache::new_segment(size_t size, c10::StreamId stream, bool small, size_t request) {
  void* ptr = nullptr;
  nhal_status st = hal().memory.malloc(device_, size, &ptr);
  if (st == NHAL_STATUS_OUT_OF_MEMORY || st == NHAL_STATUS_HOST_OUT_OF_MEMORY) {
    stats_.num_alloc_retries++;
    process_pending(/*wait=*/true);
    release_free_segments();
    st = hal().memory.malloc(device_, size, &ptr);
  }
  if (st == NHAL_STATUS_OUT_OF_MEMORY || st == NHAL_STATUS_HOST_OUT_OF_MEMORY) {
    stats_.num_ooms++;
    const auto agg = static_cast<size_t>(StatType::AGGREGATE);
    int64_t allocated = stats_.allocated_bytes[agg].current;
    int64_t reserved = stats_.reserved_bytes[agg].current;
    TORCH_CHECK_WITH(OutOfMemoryError, false, nhal_last_error_message(), ". Of the memory in use, ", bytes(allocated),
                     " is allocated by PyTorch and ", bytes(reserved - allocated),
                     " is reserved by PyTorch but unallocated (requested ", bytes(request), ", rounded to a ",
                     bytes(size),
                     " segment). Free tensors you no longer need, call torch.neuron.empty_cache() or "
                     "use smaller batches.");
  }
  NEURON_HAL_CHECK(st);
  stats_.num_device_alloc++;
  for_pool(stats_.segment, small, [](auto& s) { s.increase(1); });
  for_pool(stats_.reserved_bytes, small, [&](auto& s) { s.increase(size); });
  auto* b = new Block;
  b->device = device_;
  b->stream = stream;
  b->size = size;
  b->ptr = ptr;
  b->small = small;
  alloc_observer::notify(alloc_observer::Action::kSegmentAlloc, ptr, size, device_, stream);
  return b;
}

void DeviceCache::split(Block* block, size_t size) {
  const size_t remaining = block->size - size;
  if (block->small ? remaining < kMinBlock : remaining <= kLargeSplitRemainder) return;
  auto* rest = new Block;
  rest->device = block->device;
  rest->stream = block->stream;
  rest->size = remaining;
  rest->ptr = static_cast<char*>(block->ptr) + size;
  rest->small = block->small;
  rest->prev = block;
  rest->next = block->next;
  if (rest->next) rest->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool_for(rest->small).insert(rest);
}

void DeviceCache::free(Block* block) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(block->ptr);
  free_locked(block);
}

bool DeviceCache::free_ptr(void* ptr, size_t* size) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  Block* block = it->second;
  live_.erase(it);
  *size = block->size;
  free_locked(block);
  return true;
}

void DeviceCache::free_locked(Block* block) {
  block->allocated = false;
  for_pool(stats_.allocation, block->small, [](auto& s) { s.decrease(1); });
  for_pool(stats_.allocated_bytes, block->small, [&](auto& s) { s.decrease(block->size); });
  for_pool(stats_.requested_bytes, block->small, [&](auto& s) { s.decrease(block->requested); });
  if (!block->uses.empty()) {
    std::vector<nhal_event> events;
    for (const c10::Stream& s : block->uses) {
      nhal_event e = nullptr;
      NEURON_HAL_CHECK(hal().event.create(0, &e));
      NEURON_HAL_CHECK(hal().event.record(e, hal_stream(s)));
      events.push_back(e);
    }
    block->uses.clear();
    pending_.emplace_back(block, std::move(events));
    return;  // stays active until the other streams pass this point
  }
  retire(block);
}

void DeviceCache::release_to_pool(Block* block) {
  mark_inactive(block);
  merge_into_pool(block);
}

void DeviceCache::mark_inactive(Block* block) {
  alloc_observer::notify(alloc_observer::Action::kFreeCompleted, block->ptr, block->requested, device_, block->stream);
  for_pool(stats_.active, block->small, [](auto& s) { s.decrease(1); });
  for_pool(stats_.active_bytes, block->small, [&](auto& s) { s.decrease(block->size); });
}

void DeviceCache::merge_into_pool(Block* block) {
  Pool& pool = pool_for(block->small);
  for (Block* n : {block->prev, block->next}) {
    if (!n || n->allocated || pool.count(n) == 0) continue;  // pending neighbours stay apart
    pool.erase(n);
    if (n == block->prev) {
      block->ptr = n->ptr;
      block->prev = n->prev;
      if (block->prev) block->prev->next = block;
    } else {
      block->next = n->next;
      if (block->next) block->next->prev = block;
    }
    block->size += n->size;
    delete n;
  }
  pool.insert(block);
}

void DeviceCache::process_pending(bool wait) {
  auto done = [&](std::vector<nhal_event>& events) {
    for (nhal_event e : events) {
      if (wait)
        NEURON_HAL_CHECK(hal().event.synchronize(e));
      else if (hal().event.query(e) != NHAL_STATUS_OK)
        return false;
    }
    return true;
  };
  for (size_t i = 0; i < pending_.size();) {
    if (!done(pending_[i].second)) {
      ++i;
      continue;
    }
    for (nhal_event e : pending_[i].second) hal().event.destroy(e);
    Block* b = pending_[i].first;
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    retire(b);
  }
  release_unshared();
}

void DeviceCache::release_free_segments() {
  flush_recent();
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      alloc_observer::notify(alloc_observer::Action::kSegmentFree, b->ptr, b->size, device_, b->stream);
      NEURON_HAL_CHECK(hal().memory.free(b->ptr));
      stats_.num_device_free++;
      for_pool(stats_.segment, b->small, [](auto& s) { s.decrease(1); });
      for_pool(stats_.reserved_bytes, b->small, [&](auto& s) { s.decrease(b->size); });
      it = pool->erase(it);
      delete b;
    }
  }
}

void DeviceCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_pending(/*wait=*/true);
  release_free_segments();
}

void DeviceCache::record_stream(Block* block, c10::Stream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stream.id() == block->stream) return;
  if (std::find(block->uses.begin(), block->uses.end(), stream) == block->uses.end()) {
    block->uses.push_back(stream);
  }
}

Block* DeviceCache::find_allocated(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  return it == live_.end() ? nullptr : it->second;
}

std::vector<SegmentInfo> DeviceCache::segments() {
  std::lock_guard<std::mutex> lock(mu_);
  flush_recent();
  std::vector<Block*> heads;  // every block is live, cached or pending; a segment starts at one without prev
  auto add_head = [&](Block* b) {
    if (!b->prev) heads.push_back(b);
  };
  for (auto& [ptr, b] : live_) add_head(b);
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (Block* b : *pool) add_head(b);
  }
  for (auto& [b, events] : pending_) add_head(b);
  for (Block* b : shared_) add_head(b);
  std::sort(heads.begin(), heads.end(), [](Block* a, Block* b) { return std::less<void*>()(a->ptr, b->ptr); });
  std::vector<SegmentInfo> out;
  for (Block* head : heads) {
    SegmentInfo s;
    s.device = device_;
    s.stream = head->stream;
    s.small = head->small;
    s.address = head->ptr;
    for (Block* b = head; b; b = b->next) {
      const bool cached = pool_for(b->small).count(b) != 0;
      const auto state = b->allocated ? SegmentInfo::State::kAllocated
                                      : (cached ? SegmentInfo::State::kInactive : SegmentInfo::State::kPendingFree);
      s.blocks.push_back({b->ptr, b->size, b->allocated || !cached ? b->requested : 0, state});
      s.total_size += b->size;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void DeviceCache::update_inactive_split() {
  c10::CachingAllocator::StatArray count{}, bytes_{};
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (Block* b : *pool) {
      if (!b->prev && !b->next) continue;
      for_pool(count, b->small, [](auto& s) { s.current += 1; });
      for_pool(bytes_, b->small, [&](auto& s) { s.current += static_cast<int64_t>(b->size); });
    }
  }
  for (size_t i = 0; i < count.size(); ++i) {
    stats_.inactive_split[i].current = count[i].current;
    stats_.inactive_split[i].peak = std::max(stats_.inactive_split[i].peak, count[i].current);
    stats_.inactive_split_bytes[i].current = bytes_[i].current;
    stats_.inactive_split_bytes[i].peak = std::max(stats_.inactive_split_bytes[i].peak, bytes_[i].current);
  }
}

DeviceCache::DeviceStats DeviceCache::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  flush_recent();
  update_inactive_split();
  return stats_;
}

void DeviceCache::for_each_stat(const std::function<void(c10::CachingAllocator::Stat&)>& fn) {
  for (auto* arr :
       {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split, &stats_.allocated_bytes,
        &stats_.reserved_bytes, &stats_.active_bytes, &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (auto& s : *arr) fn(s);
  }
}

void DeviceCache::reset_accumulated() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat([](auto& s) { s.reset_accumulated(); });
  stats_.num_alloc_retries = 0;
  stats_.num_ooms = 0;
  stats_.num_device_alloc = 0;
  stats_.num_device_free = 0;
}

void DeviceCache::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat([](auto& s) { s.reset_peak(); });
}

}  // namespace torch_neuronx
