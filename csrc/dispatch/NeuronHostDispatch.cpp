// The zero-copy path for every op without a neuron kernel: ATen's own CPU
// kernel runs directly on device memory (on a host-addressable device, see
// runtime/NeuronHostAccess.h), with no copy in or out.
//
//  1. Neuron tensor arguments become CPU aliases: CPU tensors over the same
//     bytes (same sizes, strides, offset), whose storage may grow through the
//     scoped allocator. Neuron Device arguments (factory ops) become CPU.
//  2. The op's CPU kernel runs (redispatch to the CPU key) inside a
//     DeviceOutputScope, so whatever it allocates is neuron memory.
//  3. Mutated arguments take back any new storage or shape from their aliases
//     (out= resized by the kernel); outputs that alias an argument become
//     neuron tensors (or views) over that argument's storage; fresh outputs are
//     adopted as neuron storages as they are. An output in plain CPU memory
//     (a kernel that bypassed the CPU allocator) is copied and counted as a
//     fallback.
//
// Sparse arguments (COO and compressed layouts) become CPU sparse tensors
// over aliases of their members (indices, values), the CPU's sparse kernel
// runs, and sparse results become neuron sparse tensors over their (adopted)
// members (NeuronSparseMembers.h). Quantized results and other layouts raise
// NotImplementedError naming what they are.
//
// The dispatcher prefers a composite kernel over a backend fallback, so ops
// that have both a CPU kernel and a generic composite one (the generated
// functional/in-place wrappers of structured ops, native_layer_norm, ...) get
// host_dispatch registered for PrivateUse1 explicitly (register_host_kernels),
// and likewise for the sparse keys where the CPU has a sparse kernel: the CPU
// kernel then runs as on the CPU, bitwise equal and in one dispatch.
//
// While zero-copy is turned off (torch_neuronx._C._set_zero_copy(False), the
// benchmark baseline), and on a device whose memory the host cannot address,
// every op takes the copying CPU fallback instead (NeuronCopyingFallback.cpp).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "dispatch/NeuronHostDispatch.h"

#include "dispatch/NeuronArgumentChecks.h"
#include "dispatch/NeuronCopyingFallback.h"
#include "dispatch/NeuronObserveArguments.h"
#include "dispatch/NeuronOutputScope.h"
#include "dispatch/NeuronSparseMembers.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

std::atomic<bool> g_zero_copy{true};

struct Alias {
  at::Tensor host;    // the CPU alias handed to the kernel
  at::Tensor device;  // the neuron tensor it stands for
};

// A CPU storage over a neuron storage's bytes (not owning them); it may grow
// through the scoped allocator.
c10::Storage alias_storage(c10::StorageImpl* s) {
  return c10::Storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), s->nbytes(),
                                                            c10::DataPtr(s->mutable_data(), c10::Device(c10::kCPU)),
                                                            scoped_cpu_allocator(), /*resizable=*/true));
}

at::Tensor make_alias(const at::Tensor& t, const c10::Storage& storage) {
  auto host = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(storage),
                                                       c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  host.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  copy_math_bits(t, host);
  return host;
}

at::Tensor neuron_tensor_over(const c10::Storage& storage, const at::Tensor& like) {
  auto t = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(storage),
                                                    c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), like.dtype());
  t.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  copy_math_bits(like, t);  // a lazily conjugated or negated output (vdot's `.conj()` result) stays so
  return t;
}

template <typename Fn>
c10::IValue map_list(const c10::IValue& v, Fn fn) {
  c10::List<at::Tensor> list;
  list.reserve(v.toTensorList().size());
  for (const at::Tensor& t : v.toTensorList()) list.push_back(fn(t));
  return c10::IValue(list);
}

class HostCall {
 public:
  explicit HostCall(c10::Device device) : device_(device) {}

  c10::IValue to_host(const c10::IValue& v) {
    if (v.isTensor()) return c10::IValue(alias_of(v.toTensor()));
    if (v.isTensorList()) return map_list(v, [this](const at::Tensor& t) { return alias_of(t); });
    if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> list;
      for (std::optional<at::Tensor> t : v.toOptionalTensorList()) {
        list.push_back(t.has_value() ? std::optional<at::Tensor>(alias_of(*t)) : std::nullopt);
      }
      return c10::IValue(list);
    }
    if (v.isDevice() && v.toDevice().is_privateuseone()) return c10::IValue(c10::Device(c10::kCPU));
    return v;
  }

  // Mutated arguments take over what the kernel did to their aliases.
  void write_back_arguments() {
    for (Alias& a : aliases_) {
      c10::StorageImpl* hs = a.host.storage().unsafeGetStorageImpl();
      c10::StorageImpl* ds = a.device.storage().unsafeGetStorageImpl();
      if (hs->data() != ds->data() && hs->nbytes() > 0) {  // the kernel grew the storage
        c10::Storage grown = adopt_or_copy_storage(*hs);
        ds->set_data_ptr_noswap(std::move(grown.unsafeGetStorageImpl()->mutable_data_ptr()));
        ds->set_nbytes(grown.nbytes());
        hs->set_data_ptr_noswap(c10::DataPtr(ds->mutable_data(), c10::Device(c10::kCPU)));
      }
      auto* hi = a.host.unsafeGetTensorImpl();
      auto* di = a.device.unsafeGetTensorImpl();
      if (hi->sizes() != di->sizes() || hi->strides() != di->strides() ||
          hi->storage_offset() != di->storage_offset()) {
        di->set_sizes_and_strides(hi->sizes(), hi->strides(), hi->storage_offset());
      }
    }
  }

  // Sparse arguments take back what an in-place kernel did to their CPU
  // counterparts (new indices and values, sizes, the coalesced flag).
  void write_back_sparse_arguments() {
    for (Alias& a : sparse_aliases_) {
      std::vector<at::Tensor> host = sparse_members(a.host);
      if (same_sparse_structure(a.host, host, a.device, sparse_members(a.device))) continue;  // not mutated
      for (at::Tensor& m : host) m = device_tensor(m);
      set_sparse_members(a.device, a.host, host);
    }
  }

  // The CPU key whose kernel runs the call: a sparse one if an argument is
  // sparse (compressed before COO), as dispatch on the CPU would choose.
  c10::DispatchKeySet cpu_keys() const {
    c10::DispatchKey key = c10::DispatchKey::CPU;
    for (const Alias& a : sparse_aliases_) {
      if (a.host.layout() != c10::kSparse) return c10::DispatchKeySet(c10::DispatchKey::SparseCsrCPU);
      key = c10::DispatchKey::SparseCPU;
    }
    return c10::DispatchKeySet(key);
  }

  c10::IValue to_device(const c10::IValue& v) {
    if (v.isTensor()) return c10::IValue(device_tensor(v.toTensor()));
    if (v.isTensorList()) return map_list(v, [this](const at::Tensor& t) { return device_tensor(t); });
    return v;
  }

  bool copied_an_output() const { return copied_; }

  // Arguments over one neuron storage share one alias storage, so the CPU
  // kernel's overlap checks see what they would see on the CPU.
  at::Tensor alias_of(const at::Tensor& t) {
    if (!t.defined() || !t.is_privateuseone()) return t;
    if (t.layout() != c10::kStrided) return sparse_alias_of(t);
    c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    c10::Storage storage;
    for (const Alias& a : aliases_) {
      // The same tensor twice is the same host tensor twice: kernels tell a
      // tensor from its alias (cat's overlap check of out= against an empty input).
      if (a.device.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return a.host;
      if (a.device.storage().unsafeGetStorageImpl() == s) storage = a.host.storage();
    }
    if (!storage) storage = alias_storage(s);
    aliases_.push_back({make_alias(t, storage), t});
    return aliases_.back().host;
  }

  at::Tensor device_tensor(const at::Tensor& out) {
    if (!out.defined() || !out.is_cpu()) return out;
    check_supported_output(out);
    if (out.layout() != c10::kStrided) return sparse_device_tensor(out);
    c10::StorageImpl* s = out.storage().unsafeGetStorageImpl();
    for (const Alias& a : aliases_) {
      if (a.host.unsafeGetTensorImpl() == out.unsafeGetTensorImpl()) return a.device;  // in-place, out=
      if (a.host.storage().unsafeGetStorageImpl() == s) return neuron_tensor_over(a.device.storage(), out);
    }
    for (auto& [impl, storage] : adopted_) {  // several outputs over one fresh storage
      if (impl == s) return neuron_tensor_over(storage, out);
    }
    c10::Storage storage = adopt_or_copy_storage(*s);
    adopted_.emplace_back(s, storage);
    return neuron_tensor_over(storage, out);
  }

 private:
  // A CPU sparse tensor over CPU aliases of t's members (indices, values).
  at::Tensor sparse_alias_of(const at::Tensor& t) {
    std::vector<at::Tensor> members = sparse_members(t);
    for (at::Tensor& m : members) m = alias_of(m);
    at::Tensor host = sparse_tensor_like(t, members);
    sparse_aliases_.push_back({host, t});
    return host;
  }

  at::Tensor sparse_device_tensor(const at::Tensor& out) {
    for (const Alias& a : sparse_aliases_) {
      if (a.host.unsafeGetTensorImpl() == out.unsafeGetTensorImpl()) return a.device;  // in-place, out=
    }
    std::vector<at::Tensor> members = sparse_members(out);
    for (at::Tensor& m : members) m = device_tensor(m);
    return sparse_tensor_like(out, members);
  }

  static void check_supported_output(const at::Tensor& out) {
    TORCH_CHECK_NOT_IMPLEMENTED(!out.is_quantized(), "neuron: quantized tensors are not supported on neuron ",
                                "(an op returned a ", out.scalar_type(), " tensor); quantize on the CPU, or use ",
                                "torch.float8_e4m3fn / torch.float8_e5m2 tensors on neuron");
    TORCH_CHECK_NOT_IMPLEMENTED(out.layout() == c10::kStrided || is_supported_sparse_layout(out.layout()),
                                "neuron: ", out.layout(), " tensors are not supported on neuron (an op returned ",
                                "one); strided and sparse (COO, CSR, CSC, BSR, BSC) tensors are");
  }

  c10::Storage adopt_or_copy_storage(c10::StorageImpl& s) {
    if (is_device_memory(s) || s.nbytes() == 0) return adopt_storage(s, device_.index());
    TORCH_CHECK(s.data() != nullptr, "neuron: a CPU kernel returned a storage of ", s.nbytes(),
                " bytes with no memory behind it (a tensor kind the host dispatch cannot adopt); "
                "please report the op");
    copied_ = true;  // plain host memory: one copy onto the device
    at::Tensor bytes = at::empty_strided({static_cast<int64_t>(s.nbytes())}, {1},
                                         at::TensorOptions().dtype(at::kByte).device(device_));
    if (s.nbytes() > 0) std::memcpy(bytes.mutable_data_ptr(), s.data(), s.nbytes());
    return bytes.storage();
  }

  const c10::Device device_;
  std::vector<Alias> aliases_;
  std::vector<Alias> sparse_aliases_;
  std::vector<std::pair<c10::StorageImpl*, c10::Storage>> adopted_;
  bool copied_ = false;
};

std::optional<c10::Device> factory_device(const torch::jit::Stack& stack, size_t first) {
  for (size_t i = first; i < stack.size(); ++i) {
    if (stack[i].isDevice() && stack[i].toDevice().is_privateuseone()) {
      c10::Device d = stack[i].toDevice();
      return d.has_index() ? d : c10::Device(c10::DeviceType::PrivateUse1, current_device());
    }
  }
  return std::nullopt;
}

// run_on_host without aliases: inputs staged to host memory (and written
// back, as fn may mutate them), fn's CPU outputs copied to the device.
std::vector<at::Tensor> run_on_staged_copies(
    c10::Device device, const std::vector<at::Tensor>& inputs,
    const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& fn) {
  std::vector<HostAccess> staged;
  std::vector<at::Tensor> host_inputs;
  staged.reserve(inputs.size());
  for (const at::Tensor& t : inputs) {
    staged.emplace_back(t, HostAccess::Mode::kReadWrite);
    host_inputs.push_back(staged.back().cpu());
  }
  std::vector<at::Tensor> outputs = fn(host_inputs);
  for (HostAccess& a : staged) a.finish();
  for (at::Tensor& t : outputs) {
    if (t.defined() && t.is_cpu()) t = t.to(device);
  }
  return outputs;
}

}  // namespace

void host_dispatch(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t num_args = schema.arguments().size();
  const size_t first = stack->size() - num_args;
  std::optional<c10::Device> device = check_same_device(op, *stack, first);
  if (!device) device = factory_device(*stack, first);
  if (!device) {
    if (std::optional<c10::Device> gen_device = neuron_generator_device(op, *stack, first)) {
      // CPU tensors drawn with a neuron generator: the CPU kernel, with a CPU
      // generator seeded from the neuron generator's stream.
      substitute_generators(op, *stack, first, *gen_device);
      op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
      return;
    }
  }
  if (!device || !zero_copy_on(device->index())) {
    copying_cpu_fallback(op, stack);
    return;
  }
  substitute_generators(op, *stack, first, *device);
  trace::ActivityScope activity(trace::Kind::kOp, op.schema().operator_name().name, "host dispatch");
  if (C10_UNLIKELY(activity.on() || strict::active())) observe_arguments(op, *stack, first, activity);
  wait_for_producers(device->index());
  HostCall call(*device);
  for (size_t i = first; i < stack->size(); ++i) (*stack)[i] = call.to_host((*stack)[i]);
  {
    DeviceOutputScope scope(device->index());
    op.redispatchBoxed(call.cpu_keys(), stack);
  }
  call.write_back_arguments();
  call.write_back_sparse_arguments();
  const size_t num_returns = schema.returns().size();
  for (size_t i = stack->size() - num_returns; i < stack->size(); ++i) (*stack)[i] = call.to_device((*stack)[i]);
  if (activity.on()) {
    for (size_t i = stack->size() - num_returns; i < stack->size(); ++i) {
      if ((*stack)[i].isTensor()) activity.add_output((*stack)[i].toTensor());
    }
  }
  if (call.copied_an_output()) {
    activity.set_detail("copying fallback");
    record_fallback(c10::toString(schema.operator_name()));
  } else {
    record_host_dispatch(op);
  }
}

std::vector<at::Tensor> run_on_host(c10::Device device, const std::vector<at::Tensor>& inputs,
                                    const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& fn) {
  if (!zero_copy_on(device.index())) return run_on_staged_copies(device, inputs, fn);
  wait_for_producers(device.index());
  HostCall call(device);
  std::vector<at::Tensor> host_inputs;
  host_inputs.reserve(inputs.size());
  for (const at::Tensor& t : inputs) host_inputs.push_back(call.alias_of(t));
  std::vector<at::Tensor> outputs;
  {
    DeviceOutputScope scope(device.index());
    outputs = fn(host_inputs);
  }
  call.write_back_arguments();
  for (at::Tensor& t : outputs) t = call.device_tensor(t);
  return outputs;
}

int register_host_kernels() {
  // Each neuron key with the CPU key whose kernels it runs. Kept at module
  // scope: the registrations last as long as the process.
  static const std::pair<c10::DispatchKey, c10::DispatchKey> keys[] = {
      {c10::DispatchKey::PrivateUse1, c10::DispatchKey::CPU},
      {c10::DispatchKey::SparsePrivateUse1, c10::DispatchKey::SparseCPU},
      {c10::DispatchKey::SparseCsrPrivateUse1, c10::DispatchKey::SparseCsrCPU}};
  static int registered = -1;
  if (registered >= 0) return registered;
  registered = 0;
  for (const auto& [neuron_key, cpu_key] : keys) {
    auto* lib = new torch::Library(torch::Library::IMPL, "aten", neuron_key, __FILE__, __LINE__);
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      auto op = c10::Dispatcher::singleton().findOp(name);
      if (!op || op->hasKernelForDispatchKey(neuron_key) || !op->hasKernelForDispatchKey(cpu_key)) continue;
      if (!op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) &&
          !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) {
        continue;  // these reach the fallback anyway
      }
      std::string schema_name = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
      lib->impl(schema_name.c_str(), torch::CppFunction::makeFromBoxedFunction<&host_dispatch>());
      ++registered;
    }
  }
  return registered;
}

void set_zero_copy(bool enabled) { g_zero_copy.store(enabled); }
bool zero_copy_enabled() { return g_zero_copy.load(); }
bool zero_copy_on(c10::DeviceIndex device) {
  return g_zero_copy.load(std::memory_order_relaxed) && host_addressable(device);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&host_dispatch>()); }

}  // namespace torch_neuronx
