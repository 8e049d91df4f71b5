// The copying CPU fallback: arguments copied to the CPU, the CPU kernel run,
// results copied back. Counted and warned about as a fallback.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

TORCH_NEURONX_API void copying_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_neuronx
