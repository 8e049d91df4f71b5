// Which tensors a neuron tensor may take the place of in `var.data = t`.
//
// `Module.to()`, `Module._apply()` and `Tensor.set_data` keep a parameter's
// identity (so optimizers, hooks and lazy modules built before the move still
// hold it) only when `torch._has_compatible_shallow_copy_type(param, moved)`
// is true. c10's own answer (TensorImpl::has_compatible_shallow_copy_type)
// counts only the dense backends it knows (CPU, CUDA, XPU, ...), not
// PrivateUse1; c10's TensorImpl.h names overriding this op for the backend as
// the way to join them. Dispatch on (cpu, neuron) picks PrivateUse1, so this
// kernel answers both directions.
//
// Contract: a dense neuron tensor is compatible with any dense tensor of a
// backend c10 counts as dense, and with another neuron tensor; everything
// else keeps c10's answer (sparse with sparse, meta stays apart).
#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKeySet.h>
#include <torch/library.h>

namespace torch_neuronx {
namespace {

bool is_dense(c10::DispatchKeySet ks) {
  constexpr auto dense_backends =
      c10::DispatchKeySet({c10::BackendComponent::CPUBit, c10::BackendComponent::CUDABit, c10::BackendComponent::MPSBit,
                           c10::BackendComponent::HIPBit, c10::BackendComponent::XPUBit, c10::BackendComponent::HPUBit,
                           c10::BackendComponent::MTIABit, c10::BackendComponent::PrivateUse1Bit});
  return ks.has(c10::DispatchKey::Dense) && ks.has_any(dense_backends);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  return is_dense(self.key_set()) && is_dense(from.key_set());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

}  // namespace torch_neuronx
