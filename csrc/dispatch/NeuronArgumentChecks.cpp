#include "dispatch/NeuronArgumentChecks.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include "runtime/NeuronGenerator.h"

namespace torch_neuronx {

void SameDeviceCheck::visit(const at::Tensor& t, bool cpu_scalar_ok) {
  if (!t.defined()) return;
  if (t.is_privateuseone()) {
    if (!neuron_)
      neuron_ = t.device();
    else if (*neuron_ != t.device())
      other_ = t.device();
  } else if (!(cpu_scalar_ok && t.is_cpu() && t.dim() == 0)) {
    other_ = t.device();
  }
}

std::optional<c10::Device> SameDeviceCheck::result(const std::string& op) const {
  TORCH_CHECK(!neuron_ || !other_, "Expected all tensors to be on the same device, but found at least two devices, ",
              *neuron_, " and ", other_.value_or(*neuron_), "! (when checking arguments for ", op,
              "; move them with .to(...) first)");
  return neuron_;
}

std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                             size_t first) {
  SameDeviceCheck check;
  const auto& args = op.schema().arguments();
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    const bool written =
        i - first < args.size() && args[i - first].alias_info() && args[i - first].alias_info()->isWrite();
    if (v.isTensor())
      check.visit(v.toTensor(), !written);
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList()) check.visit(t, !written);
    else if (v.isOptionalTensorList()) {
      // Advanced indexing (index, index_put_, _index_put_impl_, _unsafe_index,
      // ...) takes CPU index tensors and masks on any device, as on CUDA: the
      // host kernel reads them where they are.
      const bool cpu_indices_allowed = i - first < args.size() && args[i - first].name() == "indices";
      for (std::optional<at::Tensor> t : v.toOptionalTensorList()) {
        if (t.has_value() && !(cpu_indices_allowed && t->defined() && t->is_cpu())) check.visit(*t, !written);
      }
    }
  }
  return check.result(c10::toString(op.schema().operator_name()));
}

void check_same_device(const char* op, const at::Tensor& first, std::initializer_list<const at::Tensor*> others) {
  SameDeviceCheck check;
  check.visit(first, false);
  for (const at::Tensor* t : others) {
    if (t != nullptr) check.visit(*t, false);
  }
  check.result(op);
}

namespace {

bool is_generator_argument(const c10::Argument& arg) {
  const auto& type = arg.real_type();
  return type->kind() == c10::TypeKind::GeneratorType ||
         (type->kind() == c10::TypeKind::OptionalType &&
          type->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType);
}

}  // namespace

std::optional<c10::Device> neuron_generator_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                                   size_t first) {
  const auto& args = op.schema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = stack[first + i];
    if (is_generator_argument(args[i]) && v.isGenerator() && v.toGenerator().device().is_privateuseone()) {
      return v.toGenerator().device();
    }
  }
  return std::nullopt;
}

// Replaces a None or neuron Generator argument by a CPU generator seeded from
// the neuron generator's (seed, offset), advancing that offset.
void substitute_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t first, c10::Device device) {
  const auto& args = op.schema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_generator_argument(args[i])) continue;
    c10::IValue& v = stack[first + i];
    at::Generator neuron_gen;
    if (v.isNone())
      neuron_gen = default_generator(device.index());
    else if (v.toGenerator().device().is_privateuseone())
      neuron_gen = v.toGenerator();
    else
      continue;  // an explicit CPU generator stays
    auto* g = at::check_generator<NeuronGeneratorImpl>(neuron_gen);
    uint64_t seed, offset;
    {
      std::lock_guard<std::mutex> lock(g->mutex_);
      std::tie(seed, offset) = g->philox_reserve(1 << 20);
    }
    at::Generator cpu = at::make_generator<at::CPUGeneratorImpl>(seed ^ (offset * 0x9E3779B97F4A7C15ull));
    v = c10::IValue(cpu);
  }
}

}  // namespace torch_neuronx
