// The copying CPU fallback (ATen's cpu_fallback: arguments copied to the CPU,
// the CPU kernel run, results copied back with the driver's copies). It runs
// while zero-copy is switched off and on a driver whose memory the host
// cannot address; counted and warned about as a fallback.
#include "dispatch/NeuronCopyingFallback.h"

#include <ATen/native/CPUFallback.h>

#include "dispatch/NeuronArgumentChecks.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {

void copying_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t first = stack->size() - schema.arguments().size();
  std::optional<c10::Device> device = check_same_device(op, *stack, first);
  if (device) substitute_generators(op, *stack, first, *device);
  record_fallback(c10::toString(schema.operator_name()));
  trace::ActivityScope activity(trace::Kind::kOp, schema.operator_name().name, "copying fallback");
  if (device) wait_for_producers(device->index());
  at::native::cpu_fallback(op, stack);
}

}  // namespace torch_neuronx
