// Argument checks shared by every way an op runs on neuron (native kernels,
// the zero-copy host dispatch, the copying fallback): the same-device rule and
// the generator substitution.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <initializer_list>
#include <optional>

namespace torch_neuronx {

// Collects the devices of an op's tensor arguments; result() throws PyTorch's
// "Expected all tensors to be on the same device" naming two of them, and
// returns the neuron device (nullopt if no argument is on neuron).
class SameDeviceCheck {
 public:
  // cpu_scalar_ok: a 0-dim CPU tensor is a scalar input here (never for an
  // in-place or out= argument).
  void visit(const at::Tensor& t, bool cpu_scalar_ok);
  std::optional<c10::Device> result(const std::string& op) const;

 private:
  std::optional<c10::Device> neuron_, other_;
};

// The rule for a boxed call's tensor arguments stack[first..]: 0-dim CPU
// tensors are allowed as scalar inputs, and CPU tensors in an
// advanced-indexing `indices` list, as on CUDA.
std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                             size_t first);

// The rule for ops whose meta function does not check devices (TensorIterator's
// does): every defined tensor on first's device.
void check_same_device(const char* op, const at::Tensor& first, std::initializer_list<const at::Tensor*> others);

// The device of the first neuron Generator argument, if any.
std::optional<c10::Device> neuron_generator_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                                   size_t first);

// Replaces a None or neuron Generator argument by a CPU generator seeded from
// the neuron generator's (seed, offset), advancing that offset, so CPU random
// kernels follow torch.manual_seed on neuron.
void substitute_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t first, c10::Device device);

}  // namespace torch_neuronx
