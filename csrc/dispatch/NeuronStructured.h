// Native neuron kernels for ATen's structured ops, with no aliasing at all.
//
// A structured op is a meta function (output shape, dtype, strides) plus an
// impl. NeuronStructured<Base> runs both on neuron tensors directly: the
// meta function asks for outputs through set_output_*, which here allocates
// them with the neuron caching allocator (functional), or checks and resizes
// the given tensors (in-place, out=), as PyTorch's generated CPU wrappers do.
// The impl then runs ATen's CPU code on device memory: TensorIterator-based
// impls call a DispatchStub with the iterator's device type (PrivateUse1),
// which NeuronCpuStubs forwards to the CPU kernel.
//
// Contract for an op registered here: its impl takes the meta arguments
// followed by the outputs, and works on any host-addressable strided memory
// (a device that is not host-addressable takes the host dispatch instead).
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/TensorMeta.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>
#include <ATen/native/Resize.h>

#include <array>
#include <functional>
#include <optional>
#include <type_traits>

#include "dispatch/NeuronArgumentChecks.h"
#include "dispatch/NeuronHostDispatch.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {

// A new neuron tensor with these sizes and strides (contiguous, or options'
// memory format, when strides is empty).
at::Tensor empty_neuron_strided(c10::IntArrayRef sizes, c10::IntArrayRef strides, const at::TensorOptions& options);

namespace structured {

enum class Mode { kFunctional, kInPlace, kOut };

template <class Base, Mode M>
class Op final : public Base {
 public:
  Op() = default;
  explicit Op(at::Tensor& out) : target_(std::ref(out)) {}

  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          at::TensorOptions options) override {
    set_output(i, sizes, strides, options, /*exact_strides=*/true);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options) override {
    set_output(i, sizes, strides, options, /*exact_strides=*/false);
  }
  const at::Tensor& maybe_get_output(int64_t i) override {
    if constexpr (M == Mode::kFunctional)
      return owned_;
    else
      return proxy_ ? *proxy_ : target_->get();
  }

  // After impl: an out= or in-place target whose strides the kernel could not
  // use received its result through a proxy; copy it over.
  void finish() {
    if constexpr (M != Mode::kFunctional) {
      if (proxy_) target_->get().copy_(*proxy_);
    }
  }
  at::Tensor take() { return std::move(owned_); }

  // On the CPU, TensorIterator converts inputs to the common dtype (and
  // writes mismatched outputs through temporaries) before the kernel runs;
  // on any other device it leaves that to the kernel, which the CPU kernels
  // do not do. Converts 0-dim inputs (Python scalars, CPU scalars) as the
  // CPU would; false when another operand's dtype differs, and the call
  // must take the host dispatch instead.
  bool ready_for_cpu_kernel() {
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Base>) {
      if (this->common_dtype_ == c10::ScalarType::Undefined) return true;
      const c10::ScalarType common = this->common_dtype_;
      for (int64_t i = 0; i < static_cast<int64_t>(this->operands_.size()); ++i) {
        at::OperandInfo& operand = this->operands_[i];
        if (operand.current_dtype == common) continue;
        if (i < this->num_outputs_ || operand.tensor_base().dim() != 0) return false;
        operand.exchange_tensor(c10::MaybeOwned<at::TensorBase>::owned(operand.tensor().to(common)));
        operand.data = operand.tensor_base().data_ptr();
        operand.current_dtype = operand.target_dtype = common;
      }
    }
    return true;
  }

 private:
  void set_output(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides, const at::TensorOptions& options,
                  bool exact_strides) {
    TORCH_INTERNAL_ASSERT(i == 0, "neuron structured kernels support one output");
    if constexpr (M == Mode::kFunctional) {
      owned_ = empty_neuron_strided(sizes, strides, options);
    } else {
      const at::Tensor& out = target_->get();
      if constexpr (M == Mode::kInPlace) {
        TORCH_CHECK(options.dtype() == out.dtype(), "Bad in-place call: input tensor dtype ", out.dtype(),
                    " and output tensor dtype ", options.dtype(), " should match");
        TORCH_CHECK(options.device() == out.device(), "Bad in-place call: input tensor device ", out.device(),
                    " and output tensor device ", options.device(), " should match");
        TORCH_CHECK(sizes == out.sizes(), "Bad in-place call: input tensor size ", out.sizes(),
                    " and output tensor size ", sizes, " should match");
      } else {
        TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                    out.dtype(), " instead");
        TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
                    ", but got ", out.device(), " instead");
        if (at::native::resize_output(out, sizes) && !strides.empty()) out.as_strided_(sizes, strides);
      }
      if (exact_strides && out.strides() != strides) proxy_ = empty_neuron_strided(sizes, strides, options);
    }
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Base>) {
      Base::set_output_raw_strided(i, sizes, strides, options);
    }
  }

  at::Tensor owned_;
  std::optional<std::reference_wrapper<at::Tensor>> target_;
  std::optional<at::Tensor> proxy_;
};

// Whether a call must take the host dispatch because the CPU kernel branches on
// the device for it; decided before the meta function, so that no neuron
// output is allocated for it. Specialized per family.
template <class Base>
struct TakesHostDispatch {
  template <class... A>
  static bool check(const A&...) {
    return false;
  }
};

// The three entry points of one structured family. Rest are the meta
// arguments after self. A call the CPU kernel cannot take as it is (see
// Op::ready_for_cpu_kernel) goes to the host dispatch, boxed, unchanged; so
// does every call while zero-copy is off (the copying baseline).
template <class Base, class... Rest>
struct Kernels {
  static inline OpCounter* counter = nullptr;  // set when registered
  static inline std::optional<c10::OperatorHandle> functional_op, inplace_op, out_op;

  static at::Tensor functional(const at::Tensor& self, Rest... rest) {
    check_devices(self, rest...);
    if (to_host_dispatch(self, rest...)) return on_host(*functional_op, self, rest...).toTensor();
    Op<Base, Mode::kFunctional> op;
    op.meta(self, rest...);
    if (!op.ready_for_cpu_kernel()) return on_host(*functional_op, self, rest...).toTensor();
    run(op, self, rest...);
    return op.take();
  }
  static at::Tensor& inplace(at::Tensor& self, Rest... rest) {
    check_devices(self, rest...);
    if (to_host_dispatch(self, rest...)) return on_host(*inplace_op, self, rest...), self;
    Op<Base, Mode::kInPlace> op(self);
    op.meta(self, rest...);
    if (!op.ready_for_cpu_kernel()) return on_host(*inplace_op, self, rest...), self;
    run(op, self, rest...);
    return self;
  }
  static at::Tensor& out(const at::Tensor& self, Rest... rest, at::Tensor& out) {
    check_devices(self, rest...);
    if (to_host_dispatch(self, rest...)) return on_host(*out_op, self, rest..., out), out;
    Op<Base, Mode::kOut> op(out);
    op.meta(self, rest...);
    if (!op.ready_for_cpu_kernel()) return on_host(*out_op, self, rest..., out), out;
    run(op, self, rest...);
    return out;
  }

 private:
  template <class O>
  static void run(O& op, const at::Tensor& self, const Rest&... rest) {
    counter->hit();
    trace::ActivityScope activity(trace::Kind::kOp, counter->name(), "native");
    if (C10_UNLIKELY(activity.on() || strict::active())) observe(activity, self, rest...);
    wait_for_producers(op.maybe_get_output(0).device().index());
    op.impl(self, rest..., op.maybe_get_output(0));
    op.finish();
    activity.add_output(op.maybe_get_output(0));
  }

  // The tensor arguments for the trace, and float64 compute for strict mode.
  static void observe(trace::ActivityScope& activity, const at::Tensor& self, const Rest&... rest) {
    auto see = [&](const at::Tensor* t) {
      if (t == nullptr || !t->defined()) return;
      activity.add_input(*t);
      if (strict::active() && strict::wide_dtype(*t)) {
        strict::report("float64", counter->name(), std::string("computes in ") + c10::toString(t->scalar_type()));
      }
    };
    see(&self);
    (see(tensor_or_null(rest)), ...);
  }

  template <class... A>
  static c10::IValue on_host(const c10::OperatorHandle& op, A&&... args) {
    torch::jit::Stack stack;
    stack.reserve(sizeof...(A));
    torch::jit::push(stack, std::forward<A>(args)...);
    host_dispatch(op, &stack);
    return std::move(stack.front());
  }

  // Decided before the meta function, so that no neuron output is allocated
  // for a call the host dispatch takes: zero-copy off or the device's memory
  // not host-addressable (both: the copying fallback), or the family's rule.
  static bool to_host_dispatch(const at::Tensor& self, const Rest&... rest) {
    c10::DeviceIndex device = self.is_privateuseone() ? self.device().index() : -1;
    [[maybe_unused]] auto take = [&](const at::Tensor* t) {  // unused when Rest is empty
      if (device < 0 && t != nullptr && t->is_privateuseone()) device = t->device().index();
    };
    (take(tensor_or_null(rest)), ...);
    return !zero_copy_on(device) || TakesHostDispatch<Base>::check(self, rest...);
  }

  static void check_devices(const at::Tensor& self, const Rest&... rest) {
    if constexpr (!std::is_base_of_v<at::TensorIteratorBase, Base>) {
      check_same_device(counter->name(), self, {tensor_or_null(rest)...});
    }
  }
  template <class V>
  static const at::Tensor* tensor_or_null(const V& v) {
    if constexpr (std::is_same_v<std::decay_t<V>, at::Tensor>)
      return &v;
    else
      return nullptr;
  }
};

}  // namespace structured
}  // namespace torch_neuronx
