// Argument handling shared by the ways an op without a neuron kernel runs:
// the zero-copy host dispatch and the copying CPU fallback.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <optional>

#include "runtime/NeuronMacros.h"

namespace torch_neuronx {

// The neuron device of the tensor arguments stack[first..]; throws PyTorch's
// "Expected all tensors to be on the same device" when they span devices
// (0-dim CPU tensors are allowed as scalar inputs, not as in-place or out=
// arguments, and so are CPU tensors in an
// advanced-indexing `indices` list, as on CUDA). nullopt if none is on neuron.
std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                             size_t first);

// The device of the first neuron Generator argument, if any.
std::optional<c10::Device> neuron_generator_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                                   size_t first);

// Replaces a None or neuron Generator argument by a CPU generator seeded from
// the neuron generator's (seed, offset), advancing that offset, so CPU random
// kernels follow torch.manual_seed on neuron.
void substitute_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t first,
                           c10::Device device);

// Copies the arguments to the CPU, runs the CPU kernel, copies results back.
// Counted and warned about as a fallback.
TORCH_NEURONX_API void copying_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_neuronx
