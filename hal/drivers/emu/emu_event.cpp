// Events as generation counters: record() bumps `recorded` and queues a marker
// that, when the stream reaches it, raises `reached` and stamps the time. The
// counters live in an EventState that the handle and every queued marker or wait
// share, so destroying a handle never pulls it from under a stream's worker
// (another stream may still be waiting for it).
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "../../loader/hal_error.h"
#include "emu_state.h"
#include "emu_stream.h"

namespace nhal::emu {
// Named (not in the anonymous namespace): nhal_event_s, a global type, holds one.
struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;  // generation of the latest record()
  uint64_t reached = 0;   // highest generation whose marker has run
  std::chrono::steady_clock::time_point stamp{};
};
}  // namespace nhal::emu

struct nhal_event_s {
  unsigned flags = 0;
  std::shared_ptr<nhal::emu::EventState> state = std::make_shared<nhal::emu::EventState>();
};

namespace nhal::emu {
namespace {

bool complete_locked(const EventState& e) { return e.reached >= e.recorded; }

nhal_status create(unsigned flags, nhal_event* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_event is null");
  if (flags & ~NHAL_EVENT_ENABLE_TIMING) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT, "unknown event flags 0x%x", flags);
  }
  auto* e = new nhal_event_s;
  e->flags = flags;
  *out = e;
  return NHAL_STATUS_OK;
}

nhal_status synchronize(nhal_event e) {
  if (!e) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event handle is null");
  EventState& st = *e->state;
  std::unique_lock<std::mutex> lock(st.mu);
  st.cv.wait(lock, [&] { return complete_locked(st); });
  return NHAL_STATUS_OK;
}

nhal_status destroy(nhal_event e) {
  if (!e) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event handle is null");
  delete e;  // queued markers and waits hold the state
  return NHAL_STATUS_OK;
}

nhal_status record(nhal_event e, nhal_stream s) {
  if (!e || !s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event or stream handle is null");
  std::shared_ptr<EventState> st = e->state;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    gen = ++st->recorded;
  }
  s->queue->submit([st, gen] {
    std::lock_guard<std::mutex> lock(st->mu);
    if (gen > st->reached) {
      st->reached = gen;
      st->stamp = std::chrono::steady_clock::now();
    }
    st->cv.notify_all();
  });
  return NHAL_STATUS_OK;
}

nhal_status stream_wait(nhal_stream s, nhal_event e) {
  if (!e || !s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event or stream handle is null");
  std::shared_ptr<EventState> st = e->state;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    gen = st->recorded;
    if (st->reached >= gen) return NHAL_STATUS_OK;  // already complete
  }
  s->queue->submit([st, gen] {
    std::unique_lock<std::mutex> lock(st->mu);
    st->cv.wait(lock, [&] { return st->reached >= gen; });
  });
  return NHAL_STATUS_OK;
}

nhal_status query(nhal_event e) {
  if (!e) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event handle is null");
  std::lock_guard<std::mutex> lock(e->state->mu);
  return complete_locked(*e->state) ? NHAL_STATUS_OK : NHAL_STATUS_NOT_READY;
}

nhal_status elapsed_ms(nhal_event start, nhal_event end, float* out_ms) {
  if (!start || !end || !out_ms) return fail(NHAL_STATUS_INVALID_ARGUMENT, "null event or output");
  if (!(start->flags & NHAL_EVENT_ENABLE_TIMING) || !(end->flags & NHAL_EVENT_ENABLE_TIMING)) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT,
                "elapsed time needs both events created with timing enabled "
                "(torch.Event(enable_timing=True))");
  }
  std::chrono::steady_clock::time_point t0, t1;
  for (auto [e, t] : {std::pair{start, &t0}, std::pair{end, &t1}}) {
    EventState& st = *e->state;
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.recorded == 0) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "elapsed time needs both events recorded first");
    }
    if (!complete_locked(st)) {
      return fail(NHAL_STATUS_NOT_READY, "an event of the elapsed-time pair has not completed yet");
    }
    *t = st.stamp;
  }
  *out_ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  return NHAL_STATUS_OK;
}

}  // namespace

const nhal_event_ops kEventOps = {create, destroy, record, stream_wait, query, synchronize, elapsed_ms};

}  // namespace nhal::emu
