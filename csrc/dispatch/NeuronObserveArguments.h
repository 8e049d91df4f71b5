// What observers see of a boxed call to the neuron device (host dispatch):
// its tensor arguments go into the trace scope; strict mode hears of float64
// or complex compute and of ops whose output shape depends on data.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "profiler/NeuronTrace.h"

namespace torch_neuronx {

void observe_arguments(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t first,
                       trace::ActivityScope& activity);

}  // namespace torch_neuronx
