// Events as generation counters: record() bumps `recorded` and queues a marker
// that, when the stream reaches it, raises `reached` and stamps the time.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "../../loader/hal_error.h"
#include "emu_stream.h"
#include "emu_state.h"

struct nhal_event_s {
  unsigned flags = 0;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;  // generation of the latest record()
  uint64_t reached = 0;   // highest generation whose marker has run
  std::chrono::steady_clock::time_point stamp{};
};

namespace nhal::emu {
namespace {

bool complete_locked(nhal_event e) { return e->reached >= e->recorded; }

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
  std::unique_lock<std::mutex> lock(e->mu);
  e->cv.wait(lock, [&] { return complete_locked(e); });
  return NHAL_STATUS_OK;
}

nhal_status destroy(nhal_event e) {
  if (!e) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event handle is null");
  synchronize(e);  // a queued marker still points at e
  delete e;
  return NHAL_STATUS_OK;
}

nhal_status record(nhal_event e, nhal_stream s) {
  if (!e || !s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event or stream handle is null");
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    gen = ++e->recorded;
  }
  s->queue->submit([e, gen] {
    std::lock_guard<std::mutex> lock(e->mu);
    if (gen > e->reached) {
      e->reached = gen;
      e->stamp = std::chrono::steady_clock::now();
    }
    e->cv.notify_all();
  });
  return NHAL_STATUS_OK;
}

nhal_status stream_wait(nhal_stream s, nhal_event e) {
  if (!e || !s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event or stream handle is null");
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    gen = e->recorded;
    if (e->reached >= gen) return NHAL_STATUS_OK;  // already complete
  }
  s->queue->submit([e, gen] {
    std::unique_lock<std::mutex> lock(e->mu);
    e->cv.wait(lock, [&] { return e->reached >= gen; });
  });
  return NHAL_STATUS_OK;
}

nhal_status query(nhal_event e) {
  if (!e) return fail(NHAL_STATUS_INVALID_ARGUMENT, "event handle is null");
  std::lock_guard<std::mutex> lock(e->mu);
  return complete_locked(e) ? NHAL_STATUS_OK : NHAL_STATUS_NOT_READY;
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
    std::lock_guard<std::mutex> lock(e->mu);
    if (e->recorded == 0) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "elapsed time needs both events recorded first");
    }
    if (!complete_locked(e)) {
      return fail(NHAL_STATUS_NOT_READY, "an event of the elapsed-time pair has not completed yet");
    }
    *t = e->stamp;
  }
  *out_ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  return NHAL_STATUS_OK;
}

}  // namespace

const nhal_event_ops kEventOps = {create, destroy, record, stream_wait, query, synchronize, elapsed_ms};

}  // namespace nhal::emu
