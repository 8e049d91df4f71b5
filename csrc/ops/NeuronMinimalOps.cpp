// The native ops every device must provide: tensor creation, views,
// resizing and storage setting, fill/zero and scalar reads. Views only touch
// metadata, so they share the CPU implementations; memory comes from the
// neuron caching allocator on the tensor's device.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/fill_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "memory/NeuronCachingAllocator.h"
#include "memory/NeuronStorage.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronHostAccess.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

constexpr c10::DispatchKeySet kNeuronKeys(c10::DispatchKey::PrivateUse1);

c10::DeviceIndex target_device(std::optional<c10::Device> device, std::optional<bool> pin_memory,
                               std::optional<c10::Layout> layout) {
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory),
              "Only CPU tensors can be pinned; got pin_memory=True for a neuron tensor");
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "neuron tensors must be strided; got layout ",
              c10::layout_or_default(layout));
  c10::Device d = c10::device_or_default(device);
  TORCH_CHECK(d.is_privateuseone(), "expected a neuron device, got ", d);
  return resolve_device(d.has_index() ? d.index() : -1);
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  NEURON_COUNT_METADATA_OP("aten::empty.memory_format");
  c10::DeviceIndex index = target_device(device, pin_memory, layout);
  const c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, index));
  return at::detail::empty_generic(size, &caching_allocator(), kNeuronKeys, c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  NEURON_COUNT_METADATA_OP("aten::empty_strided");
  c10::DeviceIndex index = target_device(device, pin_memory, layout);
  const c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, index));
  return at::detail::empty_strided_generic(size, stride, &caching_allocator(), kNeuronKeys,
                                           c10::dtype_or_default(dtype));
}

// A zero tensor (autograd's placeholder for gradients known to be zero): no
// memory, the ZeroTensor key makes every op see zeros, as on the CPU.
at::Tensor efficient_zero_tensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                 std::optional<bool> pin_memory) {
  NEURON_COUNT_METADATA_OP("aten::_efficientzerotensor");
  c10::Device d(c10::DeviceType::PrivateUse1, target_device(device, pin_memory, layout));
  at::native::ZeroTensorAllocator allocator(d);
  const c10::DispatchKeySet keys = kNeuronKeys | c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(size, &allocator, keys, c10::dtype_or_default(dtype), std::nullopt);
}

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset) {
  NEURON_COUNT_METADATA_OP("aten::as_strided");
  return at::cpu::as_strided_symint(self, size, stride, std::move(storage_offset));
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  NEURON_COUNT_METADATA_OP("aten::view");
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  NEURON_COUNT_METADATA_OP("aten::_reshape_alias");
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  NEURON_COUNT_METADATA_OP("aten::resize_");
  // Growth happens on the device first (a new block, the old bytes copied on
  // the stream), so ATen's CPU resize finds the storage large enough and
  // never copies device bytes with host stores.
  int64_t numel = 1;
  for (const c10::SymInt& s : size) numel *= s.expect_int();
  const size_t needed = static_cast<size_t>((self.storage_offset() + numel) * self.element_size());
  if (numel > 0 && self.storage().nbytes() < needed)
    resize_storage_bytes(self.storage().unsafeGetStorageImpl(), needed);
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), memory_format);
}

at::Tensor& set_source_storage_offset(at::Tensor& self, at::Storage source, int64_t offset, c10::IntArrayRef size,
                                      c10::IntArrayRef stride) {
  NEURON_COUNT_METADATA_OP("aten::set_.source_Storage_storage_offset");
  return at::cpu::set_(self, source, offset, size, stride);
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  NEURON_COUNT_METADATA_OP("aten::set_.source_Storage");
  return at::native::set_(self, source);
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  NEURON_COUNT_METADATA_OP("aten::set_.source_Tensor");
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty(at::Tensor& self) {
  NEURON_COUNT_METADATA_OP("aten::set_");
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, &caching_allocator(), true);
  return at::cpu::set_(self, empty, 0, {0}, {});
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  NEURON_COUNT_OP("aten::fill_.Scalar");
  neuron_op_activity_.add_output(self);
  HostAccess host(self, HostAccess::Mode::kWrite);
  at::native::fill_(const_cast<at::Tensor&>(host.cpu()), value);
  host.finish();
  return self;
}

// As ATen's fill_ on any device: a value on another device (a CPU scalar
// tensor) is a Scalar, converted with overflow checks; a value on self's
// device is copied and cast as copy_ casts, unchecked (uint8 filled with
// -4.8 holds 252, as on the CPU).
at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  NEURON_COUNT_OP("aten::fill_.Tensor");
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  if (value.device() != self.device()) {
    return fill_scalar(self, value.item());
  }
  const at::Tensor host_value = value.cpu();  // a copy: value may alias self
  neuron_op_activity_.add_output(self);
  HostAccess host(self, HostAccess::Mode::kWrite);
  at::native::fill_(const_cast<at::Tensor&>(host.cpu()), host_value);
  host.finish();
  return self;
}

at::Tensor& zero(at::Tensor& self) {
  NEURON_COUNT_OP("aten::zero_");
  neuron_op_activity_.add_output(self);
  return fill_scalar(self, 0);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  NEURON_COUNT_OP("aten::_local_scalar_dense");
  TORCH_CHECK(self.numel() > 0, "_local_scalar_dense: the tensor has no elements");
  if (strict::active())
    strict::report("host_sync", "aten::_local_scalar_dense",
                   "the host reads a device value (.item(), bool(), int(), float())");
  neuron_op_activity_.add_input(self);
  // One element through the HAL on the current stream: a host read, so it
  // synchronizes, and it works for drivers without host-addressable memory.
  at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
  c10::Stream s = current_stream(self.device().index());
  const char* src = static_cast<const char*>(self.storage().data()) + self.storage_offset() * self.element_size();
  NEURON_HAL_CHECK(
      hal().memory.copy(hal_stream(s), host.mutable_data_ptr(), src, self.element_size(), NHAL_COPY_DEVICE_TO_HOST));
  synchronize_stream(s);
  return at::native::_local_scalar_dense_cpu(host);
}

// Tensor.record_stream(s): the block may not be reused before s passes the free.
void record_stream(at::Tensor& self, c10::Stream stream) {
  NEURON_COUNT_METADATA_OP("aten::record_stream");
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream of a neuron tensor needs a "
              "neuron stream, got ",
              stream);
  caching_allocator().recordStream(self.storage().data_ptr(), stream);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_efficientzerotensor", efficient_zero_tensor);
  m.impl("as_strided", as_strided);
  m.impl("view", view);
  m.impl("_reshape_alias", reshape_alias);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage_storage_offset", set_source_storage_offset);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("record_stream", record_stream);
}

}  // namespace torch_neuronx
