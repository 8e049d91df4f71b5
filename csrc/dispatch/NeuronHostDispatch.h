// The zero-copy host dispatch (the PrivateUse1 fallback) and its switch.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>
#include <vector>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// Off: every op without a neuron kernel takes the copying CPU fallback (the
// baseline benchmarks compare against). On by default.
TORCH_NEURONX_API void set_zero_copy(bool enabled);
TORCH_NEURONX_API bool zero_copy_enabled();
// Whether host kernels run on this device's memory in place (-1: the current
// device): zero-copy on and the memory host-addressable. Otherwise an op
// without a neuron kernel takes the copying fallback.
TORCH_NEURONX_API bool zero_copy_on(c10::DeviceIndex device);

// Registers the host dispatch for PrivateUse1 on every aten op that has a CPU
// kernel and a composite one, but no neuron kernel (and for the sparse neuron
// keys where the op has a CPU sparse kernel); returns how many. Called once,
// after all libraries registered their kernels (torch_neuronx import).
TORCH_NEURONX_API int register_host_kernels();

// The host dispatch itself, for native kernels that hand a call back to it.
TORCH_NEURONX_API void host_dispatch(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// For native kernels written in terms of other ATen ops: runs fn on CPU
// aliases of inputs (undefined tensors pass through) with device-memory
// allocation, and returns fn's outputs as neuron tensors, as the host
// dispatch does for a whole op.
TORCH_NEURONX_API std::vector<at::Tensor> run_on_host(
    c10::Device device, const std::vector<at::Tensor>& inputs,
    const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& fn);

}  // namespace torch_neuronx
