// Convolutions. For a device without its own convolution backend, ATen routes
// convolution to convolution_overrideable and its backward to
// convolution_backward_overrideable; both run ATen's CPU convolution
// (oneDNN or the native kernels) on host aliases of device memory.
#include <ATen/core/Tensor.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <torch/library.h>

#include "dispatch/NeuronHostDispatch.h"
#include "profiler/NeuronOpTracking.h"

namespace torch_neuronx {
namespace {

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                    at::IntArrayRef output_padding, int64_t groups) {
  NEURON_COUNT_OP("aten::convolution_overrideable");
  neuron_op_activity_.add_input(input);
  neuron_op_activity_.add_input(weight);
  at::Tensor out = run_on_host(input.device(), {input, weight, bias.value_or(at::Tensor())}, [&](const auto& h) {
                     std::optional<at::Tensor> b = h[2].defined() ? std::optional<at::Tensor>(h[2]) : std::nullopt;
                     return std::vector<at::Tensor>{
                         at::convolution(h[0], h[1], b, stride, padding, dilation, transposed, output_padding, groups)};
                   }).front();
  neuron_op_activity_.add_output(out);
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask) {
  NEURON_COUNT_OP("aten::convolution_backward_overrideable");
  // The bias gradient has one entry per output channel.
  const int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
  auto out = run_on_host(input.device(), {grad_output, input, weight}, [&](const auto& h) {
    auto [gi, gw, gb] = at::convolution_backward(h[0], h[1], h[2], at::IntArrayRef{channels}, stride, padding, dilation,
                                                 transposed, output_padding, groups, output_mask);
    return std::vector<at::Tensor>{gi, gw, gb};
  });
  neuron_op_activity_.add_input(grad_output);
  neuron_op_activity_.add_input(input);
  neuron_op_activity_.add_input(weight);
  return {out[0], out[1], out[2]};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution_overrideable);
  m.impl("convolution_backward_overrideable", convolution_backward_overrideable);
}

}  // namespace torch_neuronx
