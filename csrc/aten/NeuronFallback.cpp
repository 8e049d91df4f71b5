// The copying CPU fallback (ATen's cpu_fallback: arguments copied to the CPU,
// the CPU kernel run, results copied back) and the argument checks it shares
// with the zero-copy host dispatch (NeuronHostDispatch.cpp).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <optional>

#include "aten/NeuronFallback.h"

#include "aten/NeuronHostAccess.h"
#include "aten/NeuronOpTracking.h"
#include "runtime/NeuronGenerator.h"

namespace torch_neuronx {

std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                             size_t first) {
  std::optional<c10::Device> neuron;
  std::optional<c10::Device> other;
  // `written`: an in-place or out= argument, which a CPU scalar cannot be.
  auto visit = [&](const at::Tensor& t, bool written) {
    if (!t.defined()) return;
    if (t.is_privateuseone()) {
      if (!neuron) neuron = t.device();
      else if (*neuron != t.device()) other = t.device();
    } else if (!(t.is_cpu() && t.dim() == 0 && !written)) {
      other = t.device();
    }
  };
  const auto& args = op.schema().arguments();
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    const bool written = i - first < args.size() && args[i - first].alias_info() && args[i - first].alias_info()->isWrite();
    if (v.isTensor()) visit(v.toTensor(), written);
    else if (v.isTensorList()) for (const at::Tensor& t : v.toTensorList()) visit(t, written);
    else if (v.isOptionalTensorList()) {
      // Advanced indexing (index, index_put_, _index_put_impl_, _unsafe_index,
      // ...) takes CPU index tensors and masks on any device, as on CUDA: the
      // host kernel reads them where they are.
      const bool cpu_indices_allowed = i - first < args.size() && args[i - first].name() == "indices";
      for (std::optional<at::Tensor> t : v.toOptionalTensorList()) {
        if (t.has_value() && !(cpu_indices_allowed && t->defined() && t->is_cpu())) visit(*t, written);
      }
    }
  }
  TORCH_CHECK(!neuron || !other, "Expected all tensors to be on the same device, but found at least two devices, ",
              *neuron, " and ", other.value_or(*neuron), "! (when checking arguments for ",
              op.schema().operator_name(), "; move them with .to(...) first)");
  return neuron;
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
void substitute_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t first,
                           c10::Device device) {
  const auto& args = op.schema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_generator_argument(args[i])) continue;
    c10::IValue& v = stack[first + i];
    at::Generator neuron_gen;
    if (v.isNone()) neuron_gen = default_generator(device.index());
    else if (v.toGenerator().device().is_privateuseone()) neuron_gen = v.toGenerator();
    else continue;  // an explicit CPU generator stays
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

void copying_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t first = stack->size() - schema.arguments().size();
  std::optional<c10::Device> device = check_same_device(op, *stack, first);
  if (device) substitute_generators(op, *stack, first, *device);
  record_fallback(c10::toString(schema.operator_name()));
  if (device) prepare_host_access(device->index());
  at::native::cpu_fallback(op, stack);
}

}  // namespace torch_neuronx
