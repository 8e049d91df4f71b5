// The fused LSTM and GRU cells. ATen's RNN code sends every accelerator
// (`is_cuda() || is_xpu() || is_privateuseone()`) to `_thnn_fused_lstm_cell` /
// `_thnn_fused_gru_cell`, which have CUDA kernels only; the CPU takes an
// unfused path instead. These are the same cells written with ATen ops on
// neuron tensors, with CUDA's gate order and workspace contract:
//
//   LSTM: gates = input_gates + hidden_gates (+ biases), chunks i f g o;
//         cy = sigmoid(f) cx + sigmoid(i) tanh(g); hy = sigmoid(o) tanh(cy);
//         workspace = the activated gates [i f g o] (B x 4H).
//   GRU:  r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r hn)
//         (biases added to their halves); hy = n + z (hx - n);
//         workspace = [r z n hx hn] (B x 5H), hn including its bias.
//
// The backward kernels read only the workspace (and cx, cy), as CUDA's do;
// autograd's formulas (derivatives.yaml) call them when grad mode is off in
// the backward, and the composite `_thnn_differentiable_*` ones otherwise.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "profiler/NeuronOpTracking.h"

namespace torch_neuronx {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? gates + *bias : gates;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& input_gates,
                                                               const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                               const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias) {
  NEURON_COUNT_OP("aten::_thnn_fused_lstm_cell");
  TORCH_CHECK(
      input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 && input_gates.size(1) == 4 * cx.size(-1),
      "_thnn_fused_lstm_cell: expected input and hidden gates of shape [batch, 4 * ", cx.size(-1), "], got ",
      input_gates.sizes(), " and ", hidden_gates.sizes());
  at::Tensor gates = with_bias(with_bias(input_gates + hidden_gates, input_bias), hidden_bias);
  auto chunks = gates.chunk(4, 1);
  at::Tensor i = at::sigmoid(chunks[0]), f = at::sigmoid(chunks[1]), g = at::tanh(chunks[2]),
             o = at::sigmoid(chunks[3]);
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * at::tanh(cy);
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(const std::optional<at::Tensor>& grad_hy,
                                                                        const std::optional<at::Tensor>& grad_cy,
                                                                        const at::Tensor& cx, const at::Tensor& cy,
                                                                        const at::Tensor& workspace, bool has_bias) {
  NEURON_COUNT_OP("aten::_thnn_fused_lstm_cell_backward_impl");
  const bool has_ghy = grad_hy.has_value() && grad_hy->defined();
  const bool has_gcy = grad_cy.has_value() && grad_cy->defined();
  if (!has_ghy && !has_gcy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  auto gates = workspace.chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  at::Tensor tanh_cy = at::tanh(cy);
  at::Tensor ghy = has_ghy ? *grad_hy : at::zeros_like(cy);
  at::Tensor gcx = ghy * o * (1 - tanh_cy * tanh_cy);
  if (has_gcy) gcx = gcx + *grad_cy;
  at::Tensor gi = gcx * g * i * (1 - i);
  at::Tensor gf = gcx * cx * f * (1 - f);
  at::Tensor gg = gcx * i * (1 - g * g);
  at::Tensor go = ghy * tanh_cy * o * (1 - o);
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, gcx * f, grad_bias};
}

// Input and hidden gates are [r z n] each; only n keeps its halves apart.
std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                  const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
                                                  const std::optional<at::Tensor>& hidden_bias) {
  NEURON_COUNT_OP("aten::_thnn_fused_gru_cell");
  TORCH_CHECK(
      input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 && input_gates.size(1) == 3 * hx.size(-1),
      "_thnn_fused_gru_cell: expected input and hidden gates of shape [batch, 3 * ", hx.size(-1), "], got ",
      input_gates.sizes(), " and ", hidden_gates.sizes());
  auto in = with_bias(input_gates, input_bias).chunk(3, 1);
  auto hid = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  at::Tensor r = at::sigmoid(in[0] + hid[0]);
  at::Tensor z = at::sigmoid(in[1] + hid[1]);
  at::Tensor n = at::tanh(in[2] + r * hid[2]);
  at::Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hid[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  NEURON_COUNT_OP("aten::_thnn_fused_gru_cell_backward");
  auto ws = workspace.chunk(5, 1);
  const at::Tensor &r = ws[0], &z = ws[1], &n = ws[2], &hx = ws[3], &hn = ws[4];
  at::Tensor gz = grad_hy * (hx - n) * z * (1 - z);
  at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  at::Tensor gr = gn * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", fused_lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", fused_lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", fused_gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", fused_gru_cell_backward);
}

}  // namespace torch_neuronx
