#include "emu_stream.h"

#include <algorithm>

#include "../../loader/hal_error.h"
#include "emu_state.h"

namespace nhal::emu {

Queue::Queue(int dev, bool threaded, bool blocking) : device(dev), threaded_(threaded), blocking_(blocking) {
  if (threaded_) worker_ = std::thread([this] { worker_loop(); });
}

Queue::~Queue() {
  if (!threaded_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

uint64_t Queue::submit(std::function<void()> fn) {
  if (!threaded_) {
    // Inline: the queue is empty by construction, so running now is in order.
    // Serialize concurrent submitters so items of one stream never overlap.
    std::lock_guard<std::mutex> lock(mu_);
    fn();
    completed_ = ++submitted_;
    return submitted_;
  }
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(fn));
    ticket = ++submitted_;
  }
  cv_.notify_all();
  if (blocking_) wait_for(ticket);
  return ticket;
}

void Queue::wait_for(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return completed_ >= ticket; });
}

bool Queue::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ == submitted_;
}

uint64_t Queue::submitted() {
  std::lock_guard<std::mutex> lock(mu_);
  return submitted_;
}

void Queue::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !items_.empty(); });
    if (items_.empty()) return;  // stop_ and drained
    std::function<void()> fn = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    fn();
    lock.lock();
    ++completed_;
    cv_.notify_all();
  }
}

namespace {

nhal_status check_stream(nhal_stream s) {
  if (!s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "stream handle is null");
  return NHAL_STATUS_OK;
}

nhal_status create(int device, int priority, nhal_stream* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_stream is null");
  nhal_status st = check_device(device);
  if (st != NHAL_STATUS_OK) return st;
  const Config& c = state().config;
  auto* s = new nhal_stream_s;
  s->device = device;
  s->priority = priority;
  s->queue = new Queue(device, c.queue == QueueMode::kThread, c.launch_blocking);
  {
    std::lock_guard<std::mutex> lock(state().streams_mutex);
    state().streams.push_back(s->queue);
  }
  *out = s;
  return NHAL_STATUS_OK;
}

nhal_status destroy(nhal_stream s) {
  nhal_status st = check_stream(s);
  if (st != NHAL_STATUS_OK) return st;
  s->queue->drain();
  {
    std::lock_guard<std::mutex> lock(state().streams_mutex);
    auto& v = state().streams;
    v.erase(std::remove(v.begin(), v.end(), s->queue), v.end());
  }
  delete s->queue;
  delete s;
  return NHAL_STATUS_OK;
}

nhal_status launch(nhal_stream s, nhal_host_fn fn, void* user_data) {
  nhal_status st = check_stream(s);
  if (st != NHAL_STATUS_OK) return st;
  if (!fn) return fail(NHAL_STATUS_INVALID_ARGUMENT, "host function is null");
  s->queue->submit([fn, user_data] { fn(user_data); });
  return NHAL_STATUS_OK;
}

nhal_status synchronize(nhal_stream s) {
  nhal_status st = check_stream(s);
  if (st != NHAL_STATUS_OK) return st;
  s->queue->drain();
  return NHAL_STATUS_OK;
}

nhal_status query(nhal_stream s) {
  nhal_status st = check_stream(s);
  if (st != NHAL_STATUS_OK) return st;
  return s->queue->idle() ? NHAL_STATUS_OK : NHAL_STATUS_NOT_READY;
}

}  // namespace

nhal_status synchronize_device(int device) {
  nhal_status st = check_device(device);
  if (st != NHAL_STATUS_OK) return st;
  std::vector<std::pair<Queue*, uint64_t>> pending;
  {
    std::lock_guard<std::mutex> lock(state().streams_mutex);
    for (Queue* q : state().streams) {
      if (q->device == device) pending.emplace_back(q, q->submitted());
    }
    // Waiting under the registry lock keeps the queues alive (destroy takes it).
    for (auto& [q, ticket] : pending) q->wait_for(ticket);
  }
  return NHAL_STATUS_OK;
}

const nhal_stream_ops kStreamOps = {create, destroy, launch, synchronize, query};

}  // namespace nhal::emu
