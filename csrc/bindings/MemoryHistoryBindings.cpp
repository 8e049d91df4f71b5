// torch.neuron.memory._record_memory_history and _snapshot: the recorder behind
// the caching allocator's observer hook (runtime/NeuronAllocatorObserver.h),
// producing the snapshot format of torch.cuda.memory._snapshot that
// torch.cuda._memory_viz and pytorch.org/memory_viz read.
//
// Stacks are torch::CapturedTraceback, as CUDA's allocator keeps them: gathered
// when the event happens (Python frames as code objects, no symbolization),
// symbolized when the snapshot is taken. Gathering takes the GIL, so it happens
// only where the allocator holds none of its locks (alloc, free_requested), or
// under its lock when this thread already holds the GIL (segment_free). A
// segment_alloc (and the snapshot's segment) gets the stack of the alloc that
// caused it (the next alloc on its thread); a free_completed that of its free, else of its alloc. Threads
// that never ran Python get no frames (CapturedTraceback's canGather).
#include "bindings/MemoryHistoryBindings.h"

#include <c10/util/ApproximateClock.h>
#include <c10/util/flat_hash_map.h>
#include <pybind11/stl.h>
#include <torch/csrc/profiler/combined_traceback.h>
#include <torch/csrc/utils/pybind.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"

// torch/csrc/profiler/python/combined_traceback.h, whose include of
// nlohmann/json.hpp torch's wheel does not ship: the two functions used here.
namespace torch {
std::vector<pybind11::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
void installCapturedTracebackPython();
}  // namespace torch

namespace py = pybind11;

namespace torch_neuronx {
namespace {

using alloc_observer::Action;
using Ctx = std::shared_ptr<torch::CapturedTraceback>;

// What stacks to keep (CUDA's RecordContext): none; for live blocks only;
// also for alloc entries of the trace; also for frees.
enum ContextLevel : int { kNever = 0, kState = 1, kAlloc = 2, kAll = 3 };

struct Entry {
  Action action;
  uintptr_t addr;
  size_t size;
  int64_t stream;
  int64_t time_us;
  Ctx ctx;
  std::shared_ptr<Ctx> later;  // segment_alloc: the stack of the alloc that follows it on its thread
};

// The last max entries of one device, oldest first once it wraps at next.
struct Ring {
  std::vector<Entry> entries;
  size_t next = 0;
  void push(Entry&& e, size_t max) {
    if (max == 0) return;
    if (entries.size() < max) {
      entries.push_back(std::move(e));
    } else {
      entries[next] = std::move(e);
      next = (next + 1) % max;
    }
  }
};

struct Recorder {
  std::mutex mu;  // taken inside the device cache's lock, never around it
  bool recording = false;
  bool trace = false;  // enabled="all": keep the history, not only the live blocks' stacks
  size_t max_entries = 0;
  std::vector<Ring> rings;                                       // per device
  ska::flat_hash_map<uintptr_t, Ctx> live;                       // stacks of live blocks, by address
  ska::flat_hash_map<uintptr_t, std::shared_ptr<Ctx>> segments;  // of the allocs that made each segment
};

Recorder& recorder() {
  static auto* r = new Recorder();  // leaked: allocator frees may come during teardown
  return *r;
}

std::atomic<int> g_context{kNever};
std::atomic<bool> g_cpp{false};

Ctx gather() { return torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true, g_cpp.load()); }

// A free's stack, kept for its free_completed on the same thread.
struct LastFree {
  uintptr_t addr = 0;
  Ctx ctx;
};

void on_event(Action action, void* ptr, size_t size, c10::DeviceIndex device, c10::StreamId stream) {
  const int context = g_context.load(std::memory_order_relaxed);
  Ctx ctx;
  if (action == Action::kAlloc && context >= kState) {
    ctx = gather();
  } else if (action == Action::kFreeRequested && context >= kAll) {
    ctx = gather();
  } else if (action == Action::kSegmentFree && context >= kAlloc && Py_IsInitialized() && PyGILState_Check()) {
    ctx = gather();  // under the device lock: only a thread that already holds the GIL may
  }
  thread_local LastFree last_free;
  thread_local std::vector<std::weak_ptr<Ctx>> pending_segments;
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.recording) return;  // raced with stopping
  Entry e{action,  addr,   size, static_cast<int64_t>(stream), static_cast<int64_t>(c10::getTime() / 1000),
          nullptr, nullptr};
  switch (action) {
    case Action::kAlloc:
      if (context >= kState) r.live[addr] = ctx;
      for (auto& w : pending_segments) {
        if (auto slot = w.lock()) *slot = ctx;
      }
      pending_segments.clear();
      if (context >= kAlloc) e.ctx = std::move(ctx);
      break;
    case Action::kFreeRequested:
      last_free = {addr, ctx};
      e.ctx = std::move(ctx);
      break;
    case Action::kFreeCompleted: {
      auto it = r.live.find(addr);
      if (context >= kAlloc) {
        e.ctx = last_free.addr == addr && last_free.ctx ? last_free.ctx : (it != r.live.end() ? it->second : nullptr);
      }
      if (it != r.live.end()) r.live.erase(it);
      if (last_free.addr == addr) last_free = {};
      break;
    }
    case Action::kSegmentAlloc:
      if (context >= kState) {
        auto slot = std::make_shared<Ctx>();
        pending_segments.push_back(slot);
        r.segments[addr] = slot;
        if (context >= kAlloc) e.later = std::move(slot);
      }
      break;
    case Action::kSegmentFree:
      r.segments.erase(addr);
      e.ctx = std::move(ctx);
      break;
  }
  if (!r.trace) return;
  if (r.rings.size() <= static_cast<size_t>(device)) r.rings.resize(device + 1);
  r.rings[device].push(std::move(e), r.max_entries);
}

void record_memory_history(const std::optional<std::string>& enabled, const std::optional<std::string>& context,
                           const std::string& stacks, size_t max_entries, bool clear_history) {
  TORCH_CHECK(!enabled || *enabled == "state" || *enabled == "all", "expected enabled to be 'state', 'all', or None");
  TORCH_CHECK(!context || *context == "state" || *context == "alloc" || *context == "all",
              "expected context to be 'state', 'alloc', 'all', or None");
  TORCH_CHECK(stacks == "python" || stacks == "all", "expected stacks to be 'python', or 'all'");
  static std::once_flag installed;
  std::call_once(installed, [] { torch::installCapturedTracebackPython(); });
  Recorder& r = recorder();
  if (!enabled) {
    alloc_observer::set_hook(nullptr);
    g_context.store(kNever);
    std::lock_guard<std::mutex> lock(r.mu);
    r.recording = false;
    r.rings.clear();  // as CUDA: stopping drops the history
    r.live.clear();
    r.segments.clear();
    return;
  }
  int level = kNever;
  if (context) level = *context == "all" ? kAll : (*context == "alloc" ? kAlloc : kState);
  if (stacks == "all") torch::unwind::unwind();  // warms up C++ unwinding
  {
    std::lock_guard<std::mutex> lock(r.mu);
    const size_t max = *enabled == "all" ? max_entries : 0;
    if (clear_history || max != r.max_entries) {
      r.rings.clear();
    }
    r.recording = true;
    r.trace = *enabled == "all";
    r.max_entries = max;
  }
  g_cpp.store(stacks == "all");
  g_context.store(level);
  alloc_observer::set_hook(&on_event);
}

const char* action_name(Action a) {
  switch (a) {
    case Action::kAlloc:
      return "alloc";
    case Action::kFreeRequested:
      return "free_requested";
    case Action::kFreeCompleted:
      return "free_completed";
    case Action::kSegmentAlloc:
      return "segment_alloc";
    case Action::kSegmentFree:
      return "segment_free";
  }
  return "?";
}

const char* state_name(SegmentInfo::State s) {
  switch (s) {
    case SegmentInfo::State::kAllocated:
      return "active_allocated";
    case SegmentInfo::State::kPendingFree:
      return "active_pending_free";
    case SegmentInfo::State::kInactive:
      return "inactive";
  }
  return "?";
}

py::dict memory_snapshot() {
  std::vector<std::vector<Entry>> traces(device_count_ensure_non_zero_or_zero());
  ska::flat_hash_map<uintptr_t, Ctx> live;
  ska::flat_hash_map<uintptr_t, Ctx> segment_stacks;
  {
    Recorder& r = recorder();
    std::lock_guard<std::mutex> lock(r.mu);
    if (traces.size() < r.rings.size()) traces.resize(r.rings.size());
    for (size_t d = 0; d < r.rings.size(); ++d) {
      const Ring& ring = r.rings[d];
      for (size_t i = 0; i < ring.entries.size(); ++i)
        traces[d].push_back(ring.entries[(ring.next + i) % ring.entries.size()]);
    }
    live = r.live;
    for (auto& [addr, slot] : r.segments) segment_stacks[addr] = *slot;
  }
  std::vector<SegmentInfo> segments;
  {
    py::gil_scoped_release no_gil;
    segments = memory_segments();
  }

  // Frames are filled in one symbolize call at the end (it dedups frames across stacks).
  std::vector<torch::CapturedTraceback*> stacks;
  std::vector<py::dict> owners;
  auto set_frames = [&](py::dict& d, const Ctx& ctx) {
    if (ctx) {
      stacks.push_back(ctx.get());
      owners.push_back(d);
    } else {
      d["frames"] = py::list();
    }
  };

  py::list py_segments;
  for (const SegmentInfo& s : segments) {
    py::dict seg;
    size_t allocated = 0, active = 0, requested = 0;
    py::list blocks;
    for (const SegmentInfo::BlockInfo& b : s.blocks) {
      py::dict blk;
      blk["address"] = reinterpret_cast<uintptr_t>(b.ptr);
      blk["size"] = b.size;
      blk["requested_size"] = b.requested;
      blk["state"] = state_name(b.state);
      auto it = b.state == SegmentInfo::State::kInactive ? live.end() : live.find(reinterpret_cast<uintptr_t>(b.ptr));
      set_frames(blk, it != live.end() ? it->second : nullptr);
      if (b.state == SegmentInfo::State::kAllocated) allocated += b.size;
      if (b.state != SegmentInfo::State::kInactive) {
        active += b.size;
        requested += b.requested;
      }
      blocks.append(blk);
    }
    seg["device"] = static_cast<int>(s.device);
    seg["address"] = reinterpret_cast<uintptr_t>(s.address);
    seg["total_size"] = s.total_size;
    seg["allocated_size"] = allocated;
    seg["active_size"] = active;
    seg["requested_size"] = requested;
    seg["stream"] = static_cast<int64_t>(s.stream);
    seg["segment_type"] = s.small ? "small" : "large";
    seg["segment_pool_id"] = py::make_tuple(0, 0);
    seg["is_expandable"] = false;
    auto it = segment_stacks.find(reinterpret_cast<uintptr_t>(s.address));
    set_frames(seg, it != segment_stacks.end() ? it->second : nullptr);
    seg["blocks"] = blocks;
    py_segments.append(seg);
  }

  py::list device_traces;
  for (const std::vector<Entry>& trace : traces) {
    py::list out;
    for (const Entry& e : trace) {
      py::dict d;
      d["action"] = action_name(e.action);
      d["addr"] = e.addr;
      d["size"] = e.size;
      d["stream"] = e.stream;
      d["time_us"] = e.time_us;
      set_frames(d, e.ctx ? e.ctx : (e.later ? *e.later : nullptr));
      out.append(d);
    }
    device_traces.append(out);
  }

  std::vector<py::object> frames = torch::py_symbolize(stacks);
  for (size_t i = 0; i < frames.size(); ++i) owners[i]["frames"] = frames[i];

  py::dict settings;
  settings["expandable_segments"] = false;
  py::dict result;
  result["segments"] = py_segments;
  result["device_traces"] = device_traces;
  result["allocator_settings"] = settings;
  return result;
}

}  // namespace

void bind_memory_history(py::module& m) {
  m.def("_record_memory_history", &record_memory_history, py::arg("enabled"), py::arg("context"), py::arg("stacks"),
        py::arg("max_entries"), py::arg("clear_history") = false);
  m.def("_memory_snapshot", &memory_snapshot);
  m.def("_memory_history_recording", [] { return alloc_observer::g_hook.load() != nullptr; });
}

}  // namespace torch_neuronx
