// Counts of the ops run on neuron tensors: every op (executed) and the ones
// that took the copying CPU fallback. Exposed as torch_neuronx.get_executed_ops(),
// get_fallback_ops() and clear_op_tracking(). A fallback warns once per op
// unless warnings are turned off (TORCH_NEURONX_FALLBACK_WARN=0 or
// torch_neuronx.set_fallback_warnings(False)).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>

#include "profiler/NeuronTrace.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// A counter for one natively implemented op; kernels create one through
// NEURON_COUNT_OP("aten::op.overload") (a function-local static).
class TORCH_NEURONX_API OpCounter {
 public:
  explicit OpCounter(const char* name);
  void hit() { count_.fetch_add(1, std::memory_order_relaxed); }
  const char* name() const { return name_; }
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  void reset() { count_.store(0, std::memory_order_relaxed); }

 private:
  const char* name_;
  std::atomic<int64_t> count_{0};
};

// Counts one run of the native kernel it is placed in and traces it, to the
// end of the enclosing scope, as a device op (profiler/NeuronTrace.h).
#define NEURON_COUNT_OP(name)                                 \
  static ::torch_neuronx::OpCounter neuron_op_counter_(name); \
  neuron_op_counter_.hit();                                   \
  ::torch_neuronx::trace::ActivityScope neuron_op_activity_(::torch_neuronx::trace::Kind::kOp, name, "native")

// Counts a native kernel that only changes metadata (no device work, not traced).
#define NEURON_COUNT_METADATA_OP(name)                        \
  static ::torch_neuronx::OpCounter neuron_op_counter_(name); \
  neuron_op_counter_.hit()

// Counts a zero-copy host-dispatch run of op (cached per operator).
TORCH_NEURONX_API void record_host_dispatch(const c10::OperatorHandle& op);

// Records a fallback run of op and warns the first time for it.
TORCH_NEURONX_API void record_fallback(const std::string& op);

TORCH_NEURONX_API std::map<std::string, int64_t> fallback_ops();
TORCH_NEURONX_API std::map<std::string, int64_t> executed_ops();
TORCH_NEURONX_API void clear_op_tracking();
TORCH_NEURONX_API void set_fallback_warnings(bool enabled);
TORCH_NEURONX_API bool fallback_warnings_enabled();

}  // namespace torch_neuronx
