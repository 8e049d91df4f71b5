// What the device did, for observers: torch.profiler (through the Kineto
// session in NeuronKinetoProfiler.cpp), the run record of strict mode and
// torch_neuronx's Python tracer, all through one buffer per subscriber.
//
// Contract: instrumentation sites open an ActivityScope; it costs one
// relaxed atomic load while nobody subscribes. A subscriber gets every
// activity that ENDS between its subscribe() and its take(). Activities nest
// (a native op that copies): depth 0 is the op the caller asked for, deeper
// ones are its parts (estimates count depth 0 only).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/macros/Macros.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/NeuronExport.h"

namespace torch_neuronx::trace {

enum class Kind : uint8_t { kOp, kCopy, kCollective, kKernel, kGraph };

struct Activity {
  Kind kind = Kind::kOp;
  std::string name;    // "aten::mm", "Memcpy HtoD", "c10d::allreduce_", "nki::<kernel>", "graph <id>"
  std::string detail;  // op: "native" | "host dispatch" | "copying fallback"; copy: direction; collective: transport
  int64_t start_ns = 0, end_ns = 0;  // wall clock, ns since the epoch (c10::getTime())
  int32_t device = 0;
  int64_t stream = 0;
  uint64_t correlation = 0;  // the Kineto correlation id of the CPU op that issued it, 0 if none
  int32_t depth = 0;
  int64_t host_tid = 0;                                // the system thread id of the host thread that ran it
  int64_t bytes = 0;                                   // device bytes read and written (copies: bytes moved)
  int32_t world = 0;                                   // collectives: ranks in the group
  c10::ScalarType dtype = c10::ScalarType::Undefined;  // of the first floating tensor
  std::vector<std::vector<int64_t>> in_shapes, out_shapes;
  double estimated_us = -1;  // set by the site when it knows (NKI kernels); else by the estimator
  std::string engine;        // the estimator's bounding resource ("tensor", "vector", "dma", "collective"...)
};

// Fills estimated_us and engine of depth-0 activities (set by torch_neuronx's
// Python side: the one cost model, torch_neuronx/trace_estimate.py).
using Estimator = void (*)(std::vector<Activity>& activities);
TORCH_NEURONX_API void set_estimator(Estimator estimator);
TORCH_NEURONX_API void estimate(std::vector<Activity>& activities);

struct Buffer {
  std::vector<Activity> activities;
};

TORCH_NEURONX_API extern std::atomic<int> g_subscribers;
inline bool active() { return g_subscribers.load(std::memory_order_relaxed) > 0; }

TORCH_NEURONX_API std::shared_ptr<Buffer> subscribe();
// Stops delivery to buf and returns what it holds.
TORCH_NEURONX_API std::vector<Activity> take(const std::shared_ptr<Buffer>& buf);
TORCH_NEURONX_API void record(Activity&& a);
TORCH_NEURONX_API int64_t now_ns();
TORCH_NEURONX_API int64_t this_host_tid();

// Kineto's correlation ids, pushed per thread as the CPU ops it records start.
TORCH_NEURONX_API void push_correlation(uint64_t id);
TORCH_NEURONX_API void pop_correlation();
// The innermost one on this thread (0 if none): work handed to another thread carries it.
TORCH_NEURONX_API uint64_t current_correlation();

// Records one activity over its lifetime if someone subscribes at its start.
class TORCH_NEURONX_API ActivityScope {
 public:
  // Inline, so that nobody subscribing costs one load and a branch, no call.
  ActivityScope(Kind kind, const char* name, const char* detail = "") {
    if (C10_UNLIKELY(active())) begin(kind, name, detail);
  }
  ActivityScope(Kind kind, const std::string& name, const char* detail = "") {
    if (C10_UNLIKELY(active())) begin(kind, name, detail);
  }
  ~ActivityScope() {
    if (C10_UNLIKELY(a_ != nullptr)) end();
  }
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

  // The setters do nothing while off, inline (sites call them on every op).
  bool on() const { return a_ != nullptr; }
  void set_detail(const char* detail) {
    if (C10_UNLIKELY(a_ != nullptr)) a_->detail = detail;
  }
  void set_device(int32_t device) {
    if (C10_UNLIKELY(a_ != nullptr)) move_to(device);
  }
  void set_bytes(int64_t bytes) {
    if (C10_UNLIKELY(a_ != nullptr)) a_->bytes = bytes;
  }
  void set_world(int32_t world) {
    if (C10_UNLIKELY(a_ != nullptr)) a_->world = world;
  }
  void set_correlation(uint64_t id) {
    if (C10_UNLIKELY(a_ != nullptr)) a_->correlation = id;
  }
  void set_estimate(double us, const std::string& engine) {
    if (C10_UNLIKELY(a_ != nullptr)) {
      a_->estimated_us = us;
      a_->engine = engine;
    }
  }
  void add_input(const at::Tensor& t) {
    if (C10_UNLIKELY(a_ != nullptr)) note(a_->in_shapes, t);
  }
  void add_output(const at::Tensor& t) {
    if (C10_UNLIKELY(a_ != nullptr)) note(a_->out_shapes, t);
  }

 private:
  void begin(Kind kind, std::string name, const char* detail);
  void end();
  void move_to(int32_t device);
  // A tensor argument: its shape into `shapes`, its device bytes, the first floating dtype.
  void note(std::vector<std::vector<int64_t>>& shapes, const at::Tensor& t);
  std::unique_ptr<Activity> a_;
};

}  // namespace torch_neuronx::trace

// Strict mode's hook (torch_neuronx.strict): told about what would fail or be
// slow on Trainium as it happens, on the thread running the op. It may throw;
// the exception reaches the caller of the op, so sites call it before they
// change any state.
namespace torch_neuronx::strict {

using Hook = void (*)(const char* kind, const std::string& op, const std::string& detail);
TORCH_NEURONX_API extern std::atomic<Hook> g_hook;
TORCH_NEURONX_API void set_hook(Hook hook);
inline bool active() { return g_hook.load(std::memory_order_relaxed) != nullptr; }
// kind: "fallback" | "host_sync" | "float64".
TORCH_NEURONX_API void report(const char* kind, const std::string& op, const std::string& detail);
// A neuron tensor in a dtype NeuronCores do not compute in (float64, complex).
inline bool wide_dtype(const at::Tensor& t) {
  return t.defined() && t.is_privateuseone() && (t.scalar_type() == at::kDouble || t.is_complex());
}

}  // namespace torch_neuronx::strict
