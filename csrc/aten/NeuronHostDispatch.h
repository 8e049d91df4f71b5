// The zero-copy host dispatch (the PrivateUse1 fallback) and its switch.
#pragma once

#include "runtime/NeuronMacros.h"

namespace torch_neuronx {

// Off: every op without a neuron kernel takes the copying CPU fallback (the
// baseline benchmarks compare against). On by default.
TORCH_NEURONX_API void set_zero_copy(bool enabled);
TORCH_NEURONX_API bool zero_copy_enabled();

}  // namespace torch_neuronx
