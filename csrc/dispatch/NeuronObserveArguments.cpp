#include "dispatch/NeuronObserveArguments.h"

#include <c10/util/Exception.h>

#include <string>

namespace torch_neuronx {
namespace {

// Ops whose output shape depends on the values of their inputs: the host
// must wait for the device to size the result.
bool data_dependent_shape(const std::string& name) {
  static const char* const names[] = {
      "aten::nonzero", "aten::masked_select", "aten::unique_consecutive",     "aten::unique_dim",
      "aten::_unique", "aten::_unique2",      "aten::unique_dim_consecutive", "aten::nonzero_numpy"};
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

// The tensor arguments for the trace; what strict mode reports about them.
void observe_arguments(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t first,
                       trace::ActivityScope& activity) {
  const std::string& name = op.schema().operator_name().name;
  const at::Tensor* wide = nullptr;
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (!v.isTensor()) continue;
    const at::Tensor& t = v.toTensor();
    activity.add_input(t);
    if (!wide && strict::wide_dtype(t)) wide = &t;
  }
  if (!strict::active()) return;
  std::string full = c10::toString(op.schema().operator_name());
  if (wide) strict::report("float64", full, std::string("computes in ") + c10::toString(wide->scalar_type()));
  if (data_dependent_shape(name)) strict::report("host_sync", full, "data-dependent output shape");
}

}  // namespace torch_neuronx
