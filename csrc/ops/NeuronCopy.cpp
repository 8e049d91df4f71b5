// Copies between host and device and between devices (_copy_from, which
// Tensor.copy_, .to(), .cpu() and .neuron() reach).
//
// Same dtype and the same dense layout on both sides: one HAL copy on the
// current stream of the neuron side (asynchronous only for non_blocking with
// pinned host memory; host reads otherwise synchronize). Anything else
// (dtype conversion, strided views, broadcasting): ATen's CPU copy kernel on
// host access to the device memory (runtime/NeuronHostAccess.h), in stream order.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/copy.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/resize.h>
#include <torch/library.h>

#include "memory/NeuronHostAllocator.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronHostAccess.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

bool same_dense_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.dtype() == b.dtype() && a.is_conj() == b.is_conj() && a.is_neg() == b.is_neg() &&
         a.sizes().equals(b.sizes()) && a.strides().equals(b.strides()) && a.is_non_overlapping_and_dense() &&
         b.is_non_overlapping_and_dense();
}

// First byte of a dense tensor's elements (strides are never negative).
void* dense_start(const at::Tensor& t) {
  return static_cast<char*>(t.storage().mutable_data()) + t.storage_offset() * t.element_size();
}

void copy_dense(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  const size_t n = static_cast<size_t>(src.numel()) * src.element_size();
  const bool src_dev = src.is_privateuseone(), dst_dev = dst.is_privateuseone();
  const at::Tensor& neuron_side = src_dev ? src : dst;
  c10::Stream s = current_stream(neuron_side.device().index());
  if (src_dev && dst_dev && src.device() != dst.device()) {
    wait_for_producers(dst.device().index());  // the destination's earlier work first
  }
  nhal_copy_kind kind = src_dev && dst_dev ? NHAL_COPY_DEVICE_TO_DEVICE
                        : src_dev          ? NHAL_COPY_DEVICE_TO_HOST
                                           : NHAL_COPY_HOST_TO_DEVICE;
  NEURON_HAL_CHECK(hal().memory.copy(hal_stream(s), dense_start(dst), dense_start(src), n, kind));
  if (kind == NHAL_COPY_DEVICE_TO_DEVICE && src.device() == dst.device()) return;  // stream-ordered
  const at::Tensor& host_side = src_dev ? dst : src;
  if (kind != NHAL_COPY_DEVICE_TO_DEVICE && non_blocking && is_pinned_ptr(host_side.storage().data())) {
    // Keep the pinned block out of reuse until the queued copy has run.
    const c10::DataPtr& ptr = host_side.storage().data_ptr();
    host_allocator().record_event(ptr.get(), ptr.get_context(), s);
    return;
  }
  synchronize_stream(s);
}

void copy_through_host(const at::Tensor& src, const at::Tensor& dst) {
  HostAccess from(src, HostAccess::Mode::kRead);
  HostAccess to(dst, HostAccess::Mode::kWrite);
  to.cpu().copy_(from.cpu());
  to.finish();
}

const char* direction(const at::Tensor& src, const at::Tensor& dst) {
  if (src.is_privateuseone() && dst.is_privateuseone()) return "Memcpy DtoD";
  return src.is_privateuseone() ? "Memcpy DtoH" : "Memcpy HtoD";
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  NEURON_COUNT_METADATA_OP("aten::_copy_from");  // traced as a copy, below
  TORCH_CHECK(self.defined() && dst.defined(), "_copy_from: undefined source or destination tensor");
  TORCH_CHECK((self.is_privateuseone() || self.is_cpu()) && (dst.is_privateuseone() || dst.is_cpu()),
              "copies to or from neuron tensors support cpu and neuron devices, got ", self.device(), " -> ",
              dst.device());
  // The CPU's copy_ refuses these before anything else (TensorIterator's
  // overlap checks); its kernel on host views cannot see them (each view has a
  // storage of its own).
  at::assert_no_internal_overlap(dst);
  at::assert_no_partial_overlap(dst, self);
  if (dst.numel() == 0) {  // nothing to copy, but the CPU's copy_ still refuses shapes that do not broadcast
    const std::vector<int64_t> shape = at::infer_size(dst.sizes(), self.sizes());
    TORCH_CHECK(c10::IntArrayRef(shape) == dst.sizes(), "output with shape ", dst.sizes(),
                " doesn't match the broadcast shape ", c10::IntArrayRef(shape));
    return dst;
  }
  const int64_t bytes = static_cast<int64_t>(dst.numel()) * dst.element_size();
  if (strict::active() && self.is_privateuseone() && dst.is_cpu()) {
    strict::report("host_sync", "aten::_copy_from",
                   c10::str(self.device(), " -> cpu, ", bytes, " bytes (.cpu(), .to(\"cpu\"), .tolist(), .numpy())"));
  }
  const at::Tensor& neuron_side = self.is_privateuseone() ? self : dst;
  trace::ActivityScope activity(trace::Kind::kCopy, direction(self, dst),
                                self.dtype() == dst.dtype() ? "" : "with dtype conversion");
  activity.set_device(neuron_side.device().index());
  activity.set_bytes(bytes);
  if (same_dense_layout(self, dst)) {
    copy_dense(self, dst, non_blocking);
  } else {
    copy_through_host(self, dst);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  NEURON_COUNT_OP("aten::_copy_from_and_resize");
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

// Copies resolve lazy conjugation and negation themselves (the host copy
// kernel materializes them), as copy_ does on CPU and CUDA. Without these, the
// Conjugate fallback would resolve _copy_from through clone -> copy_ ->
// _copy_from and recurse without end.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace torch_neuronx
