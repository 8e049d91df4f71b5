// The hot ops that run as native neuron kernels (NeuronStructured.h), with
// no aliasing and no boxing: the structured meta function, neuron outputs,
// and the CPU impl on device memory. Every other op takes the host dispatch
// (NeuronHostDispatch.cpp). To add a family: include its <op>_native.h,
// forward the DispatchStubs its impl calls, and add one register_family line.
#include "aten/NeuronCpuStubs.h"  // first: sets the CPU capability macros

#include <ATen/EmptyTensor.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/sub_native.h>
#include <torch/library.h>

#include "aten/NeuronHostAccess.h"
#include "aten/NeuronStructured.h"
#include "runtime/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"

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

void prepare_host_access_for(const at::Tensor& t) { prepare_host_access(t.device().index()); }

void check_same_device(const char* op, const at::Tensor& first, std::initializer_list<const at::Tensor*> others) {
  for (const at::Tensor* t : others) {
    if (t == nullptr || !t->defined()) continue;
    TORCH_CHECK(t->device() == first.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", first.device(),
                " and ", t->device(), "! (in ", op, ")");
  }
}

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
    return c10::Dispatcher::singleton().findSchemaOrThrow(
        ("aten::" + s.substr(0, dot)).c_str(), dot == std::string::npos ? "" : s.substr(dot + 1).c_str());
  };
  if (functional) m.impl(functional, &K::functional), K::functional_op = handle(functional);
  if (inplace) m.impl(inplace, &K::inplace), K::inplace_op = handle(inplace);
  if (out) m.impl(out, &K::out), K::out_op = handle(out);
}

void forward_stubs() {
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::add_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::mul_stub);
  TORCH_NEURONX_FORWARD_TO_CPU(at::native::div_true_stub);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  forward_stubs();
  register_family<Kernels<at::native::structured_ufunc_add_CPU, T, S>>(m, "aten::add", "add.Tensor", "add_.Tensor",
                                                                       "add.out");
  register_family<Kernels<at::native::structured_sub_out, T, S>>(m, "aten::sub", "sub.Tensor", "sub_.Tensor",
                                                                 "sub.out");
  register_family<Kernels<at::native::structured_mul_out, T>>(m, "aten::mul", "mul.Tensor", "mul_.Tensor", "mul.out");
  register_family<Kernels<at::native::structured_div_out, T>>(m, "aten::div", "div.Tensor", "div_.Tensor", "div.out");
  register_family<Kernels<at::native::structured_mm_out_cpu, T>>(m, "aten::mm", "mm", nullptr, "mm.out");
}

}  // namespace
}  // namespace torch_neuronx
