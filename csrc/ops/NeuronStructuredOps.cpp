// The hot ops that run as native neuron kernels (NeuronStructured.h), with
// no aliasing and no boxing: the structured meta function, neuron outputs,
// and the CPU impl on device memory. Every other op takes the host dispatch
// (NeuronHostDispatch.cpp). To add a family: include its <op>_native.h, add
// one register_family line, and forward the DispatchStubs its impl calls
// (NeuronCpuStubs.cpp). Only families whose CPU impl does not branch on the
// device belong here (the OpInfo sweep checks them bitwise against the CPU),
// or whose calls that do branch TakesHostDispatch sends to the host dispatch.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/_log_softmax_backward_data_native.h>
#include <ATen/ops/_log_softmax_native.h>
#include <ATen/ops/_softmax_backward_data_native.h>
#include <ATen/ops/_softmax_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/addmm_native.h>
#include <ATen/ops/baddbmm_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/cos_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/exp_native.h>
#include <ATen/ops/log_native.h>
#include <ATen/ops/maximum_native.h>
#include <ATen/ops/minimum_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/reciprocal_native.h>
#include <ATen/ops/rsqrt_native.h>
#include <ATen/ops/sigmoid_backward_native.h>
#include <ATen/ops/sigmoid_native.h>
#include <ATen/ops/silu_backward_native.h>
#include <ATen/ops/silu_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/tanh_backward_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <torch/library.h>

#include "dispatch/NeuronStructured.h"
#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {

namespace {

// Makes a device current for a scope (the guard's work, without its
// virtual calls).
class DeviceSwitch {
 public:
  explicit DeviceSwitch(c10::DeviceIndex device) : previous_(exchange_device(device)) {}
  ~DeviceSwitch() { exchange_device(previous_); }
  DeviceSwitch(const DeviceSwitch&) = delete;
  DeviceSwitch& operator=(const DeviceSwitch&) = delete;

 private:
  c10::DeviceIndex previous_;
};

}  // namespace

at::Tensor empty_neuron_strided(c10::IntArrayRef sizes, c10::IntArrayRef strides, const at::TensorOptions& options) {
  // The allocator serves the current device; outputs belong on options'.
  const c10::DeviceIndex index = options.device().index();
  std::optional<DeviceSwitch> on_device;
  if (index >= 0 && index != current_device()) on_device.emplace(index);
  constexpr c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  const c10::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  if (strides.empty()) {  // the meta function left the layout to the allocator
    return at::detail::empty_generic(sizes, &caching_allocator(), keys, dtype, options.memory_format_opt());
  }
  return at::detail::empty_strided_generic(sizes, strides, &caching_allocator(), keys, dtype);
}

namespace structured {

// bmm and baddbmm in bfloat16 / half try oneDNN's matmul first, which accepts
// only CPU tensors: on device memory it fails, warns, and turns oneDNN off for
// the whole process (torch.backends.mkldnn.enabled becomes False). The host
// dispatch hands the kernel CPU views, which oneDNN takes.
inline bool reduced_precision(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf;
}
template <>
struct TakesHostDispatch<at::native::structured_bmm_out_cpu> {
  static bool check(const at::Tensor& self, const at::Tensor&) { return reduced_precision(self); }
};
template <>
struct TakesHostDispatch<at::native::structured_baddbmm_out_cpu> {
  template <class... A>
  static bool check(const at::Tensor& self, const at::Tensor& batch1, const A&...) {
    return reduced_precision(self) || reduced_precision(batch1);
  }
};

}  // namespace structured

namespace {

using structured::Kernels;
using T = const at::Tensor&;
using S = const at::Scalar&;

template <class K>
void register_family(torch::Library& m, const char* family, const char* functional, const char* inplace,
                     const char* out) {
  K::counter = new OpCounter(family);  // lives as long as the registration
  auto handle = [](const char* name) {
    std::string s(name);
    size_t dot = s.find('.');
    return c10::Dispatcher::singleton().findSchemaOrThrow(("aten::" + s.substr(0, dot)).c_str(),
                                                          dot == std::string::npos ? "" : s.substr(dot + 1).c_str());
  };
  if (functional) m.impl(functional, &K::functional), K::functional_op = handle(functional);
  if (inplace) m.impl(inplace, &K::inplace), K::inplace_op = handle(inplace);
  if (out) m.impl(out, &K::out), K::out_op = handle(out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // family, structured class and the meta arguments after the first tensor;
  // then the functional, in-place and out= schema names.
  register_family<Kernels<at::native::structured_ufunc_add_CPU, T, S>>(m, "aten::add", "add.Tensor", "add_.Tensor",
                                                                       "add.out");
  register_family<Kernels<at::native::structured_sub_out, T, S>>(m, "aten::sub", "sub.Tensor", "sub_.Tensor",
                                                                 "sub.out");
  register_family<Kernels<at::native::structured_mul_out, T>>(m, "aten::mul", "mul.Tensor", "mul_.Tensor", "mul.out");
  register_family<Kernels<at::native::structured_div_out, T>>(m, "aten::div", "div.Tensor", "div_.Tensor", "div.out");
  register_family<Kernels<at::native::structured_maximum_out, T>>(m, "aten::maximum", "maximum", nullptr,
                                                                  "maximum.out");
  register_family<Kernels<at::native::structured_minimum_out, T>>(m, "aten::minimum", "minimum", nullptr,
                                                                  "minimum.out");
  register_family<Kernels<at::native::structured_pow_Tensor_Scalar_out, S>>(m, "aten::pow", "pow.Tensor_Scalar",
                                                                            "pow_.Scalar", "pow.Tensor_Scalar_out");
  register_family<Kernels<at::native::structured_neg_out>>(m, "aten::neg", "neg", "neg_", "neg.out");
  register_family<Kernels<at::native::structured_exp_out>>(m, "aten::exp", "exp", "exp_", "exp.out");
  register_family<Kernels<at::native::structured_log_out>>(m, "aten::log", "log", "log_", "log.out");
  register_family<Kernels<at::native::structured_sqrt_out>>(m, "aten::sqrt", "sqrt", "sqrt_", "sqrt.out");
  register_family<Kernels<at::native::structured_rsqrt_out>>(m, "aten::rsqrt", "rsqrt", "rsqrt_", "rsqrt.out");
  register_family<Kernels<at::native::structured_sigmoid_out>>(m, "aten::sigmoid", "sigmoid", "sigmoid_",
                                                               "sigmoid.out");
  register_family<Kernels<at::native::structured_tanh_out>>(m, "aten::tanh", "tanh", "tanh_", "tanh.out");
  register_family<Kernels<at::native::structured_sin_out>>(m, "aten::sin", "sin", "sin_", "sin.out");
  register_family<Kernels<at::native::structured_cos_out>>(m, "aten::cos", "cos", "cos_", "cos.out");
  register_family<Kernels<at::native::structured_reciprocal_out>>(m, "aten::reciprocal", "reciprocal", "reciprocal_",
                                                                  "reciprocal.out");
  register_family<Kernels<at::native::structured_silu_out>>(m, "aten::silu", "silu", "silu_", "silu.out");
  register_family<Kernels<at::native::structured_silu_backward_out, T>>(m, "aten::silu_backward", "silu_backward",
                                                                        nullptr, "silu_backward.grad_input");
  register_family<Kernels<at::native::structured_sigmoid_backward_out, T>>(
      m, "aten::sigmoid_backward", "sigmoid_backward", nullptr, "sigmoid_backward.grad_input");
  register_family<Kernels<at::native::structured_tanh_backward_out, T>>(m, "aten::tanh_backward", "tanh_backward",
                                                                        nullptr, "tanh_backward.grad_input");
  register_family<Kernels<at::native::structured_threshold_backward_out, T, S>>(
      m, "aten::threshold_backward", "threshold_backward", nullptr, "threshold_backward.grad_input");
  register_family<
      Kernels<at::native::structured_sum_out, at::OptionalIntArrayRef, bool, std::optional<c10::ScalarType>>>(
      m, "aten::sum", "sum.dim_IntList", nullptr, "sum.IntList_out");
  register_family<Kernels<at::native::structured_mm_out_cpu, T>>(m, "aten::mm", "mm", nullptr, "mm.out");
  register_family<Kernels<at::native::structured_bmm_out_cpu, T>>(m, "aten::bmm", "bmm", nullptr, "bmm.out");
  register_family<Kernels<at::native::structured_addmm_out_cpu, T, T, S, S>>(m, "aten::addmm", "addmm", "addmm_",
                                                                             "addmm.out");
  register_family<Kernels<at::native::structured_baddbmm_out_cpu, T, T, S, S>>(m, "aten::baddbmm", "baddbmm",
                                                                               "baddbmm_", "baddbmm.out");
  register_family<Kernels<at::native::structured_softmax_cpu_out, int64_t, bool>>(m, "aten::_softmax", "_softmax",
                                                                                  nullptr, "_softmax.out");
  register_family<Kernels<at::native::structured_log_softmax_cpu_out, int64_t, bool>>(
      m, "aten::_log_softmax", "_log_softmax", nullptr, "_log_softmax.out");
  register_family<Kernels<at::native::structured_softmax_backward_cpu_out, T, int64_t, c10::ScalarType>>(
      m, "aten::_softmax_backward_data", "_softmax_backward_data", nullptr, "_softmax_backward_data.out");
  register_family<Kernels<at::native::structured_log_softmax_backward_cpu_out, T, int64_t, c10::ScalarType>>(
      m, "aten::_log_softmax_backward_data", "_log_softmax_backward_data", nullptr, "_log_softmax_backward_data.out");
}

}  // namespace
}  // namespace torch_neuronx
