// The zero-copy host dispatch (the PrivateUse1 fallback) and its switch.
#pragma once

#include "runtime/NeuronMacros.h"

namespace torch_neuronx {

// Off: every op without a neuron kernel takes the copying CPU fallback (the
// baseline benchmarks compare against). On by default.
TORCH_NEURONX_API void set_zero_copy(bool enabled);
TORCH_NEURONX_API bool zero_copy_enabled();

// Registers the host dispatch for PrivateUse1 on every aten op that has a CPU
// kernel and a composite one, but no neuron kernel; returns how many. Called
// once, after all libraries registered their kernels (torch_neuronx import).
TORCH_NEURONX_API int register_host_kernels();

}  // namespace torch_neuronx
