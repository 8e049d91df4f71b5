// The DispatchStubs whose CPU kernels also serve neuron tensors: the
// structured kernels' impls (NeuronStructuredOps.cpp) and composite ops that
// ask a stub whether the device has a kernel (scaled_dot_product_attention's
// backend choice) reach the CPU code through these.
#include "dispatch/NeuronCpuStubs.h"  // first: sets the CPU capability macros

#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Pow.h>
#include <ATen/native/ReduceOps.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/native/transformers/attention.h>

namespace torch_neuronx {
namespace {

void forward_cpu_stubs() {
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::add_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::mul_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::div_true_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::neg_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::exp_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::log_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::sqrt_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::rsqrt_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::sigmoid_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::tanh_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::sin_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::cos_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::reciprocal_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::silu_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::silu_backward_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::pow_tensor_scalar_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::maximum_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::minimum_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::sum_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::sigmoid_backward_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::tanh_backward_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::threshold_stub);
  // SDPA picks the CPU's backend (the flash kernel for CPU) as on the CPU.
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::_fused_sdp_choice_stub);
}

const bool forwarded = (forward_cpu_stubs(), true);

}  // namespace
}  // namespace torch_neuronx
