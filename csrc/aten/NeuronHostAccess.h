// Host access to device memory, for kernels that run on the host CPU.
//
// host_view(t) is a CPU tensor over the same bytes as neuron tensor t (same
// sizes, strides, offset and conj/neg bits; it keeps t's storage alive). It needs a driver
// whose memory is host-addressable (the emulator's is). Before host code
// touches device memory, call prepare_host_access(device): it waits for the
// work queued on the current stream, so the host kernel runs in stream order.
#pragma once

#include <ATen/core/Tensor.h>

#include "runtime/NeuronMacros.h"

namespace torch_neuronx {

TORCH_NEURONX_API at::Tensor host_view(const at::Tensor& neuron_tensor);
TORCH_NEURONX_API void prepare_host_access(c10::DeviceIndex device);

// Carries the lazy conjugate and negative bits over to a host view.
TORCH_NEURONX_API void copy_math_bits(const at::Tensor& from, at::Tensor& to);

}  // namespace torch_neuronx
