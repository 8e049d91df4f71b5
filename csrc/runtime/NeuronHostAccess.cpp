#include "runtime/NeuronHostAccess.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <exception>

#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {
namespace {

// Per device: 0 unknown, 1 addressable, 2 not.
std::array<std::atomic<uint8_t>, kMaxNeuronDevices + 1> g_addressable{};

std::atomic<uint64_t> g_to_host_copies{0}, g_to_host_bytes{0}, g_to_device_copies{0}, g_to_device_bytes{0};

// Elements [first, last] of t's storage that t's elements lie in.
std::pair<int64_t, int64_t> element_span(const at::Tensor& t) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return {t.storage_offset(), last};
}

// One driver copy of n bytes on the device's current stream, waited for.
void staged_copy(c10::DeviceIndex device, void* dst, const void* src, size_t n, nhal_copy_kind kind) {
  c10::Stream s = current_stream(device);
  NEURON_HAL_CHECK(hal().memory.copy(hal_stream(s), dst, src, n, kind));
  synchronize_stream(s);
}

}  // namespace

bool host_addressable(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  uint8_t known = device <= kMaxNeuronDevices ? g_addressable[device].load(std::memory_order_relaxed) : 0;
  if (C10_UNLIKELY(known == 0)) {  // first query of this device (validates the index)
    const c10::DeviceIndex d = resolve_device(device);
    known = (device_properties(d).capabilities & NHAL_DEVICE_CAP_HOST_ADDRESSABLE) ? 1 : 2;
    g_addressable[d].store(known, std::memory_order_relaxed);
  }
  return known == 1;
}

bool producers_pending(c10::DeviceIndex device) {
  nhal_status st = hal().stream.query(hal_stream(current_stream_of_valid(resolve_device(device))));
  if (st == NHAL_STATUS_NOT_READY) return true;
  NEURON_HAL_CHECK(st);
  return false;
}

void wait_for_producers(c10::DeviceIndex device) {
  if (producers_pending(device)) synchronize_stream(current_stream_of_valid(resolve_device(device)));
}

void wait_for_producers(c10::ArrayRef<at::Tensor> ts) {
  c10::DeviceIndex waited = -1;
  for (const at::Tensor& t : ts) {
    if (!t.defined() || !t.is_privateuseone() || t.device().index() == waited) continue;
    waited = t.device().index();
    wait_for_producers(waited);
  }
}

at::Tensor host_view(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "host_view expects a neuron tensor, got a ",
              t.device(), " tensor; please report the call");
  TORCH_CHECK(host_addressable(t.device().index()), "the NeuronCore driver '", hal().name, "' does not expose ",
              t.device(), "'s memory to the host; this path must go through HostAccess (please report the call)");
  c10::Storage keep = t.storage();
  char* first = static_cast<char*>(t.storage().mutable_data());
  if (first) first += t.storage_offset() * static_cast<int64_t>(t.element_size());
  at::Tensor host =
      at::for_blob(first, t.sizes())
          .strides(t.strides())
          .context(new c10::Storage(std::move(keep)), [](void* ctx) { delete static_cast<c10::Storage*>(ctx); })
          .options(t.options().device(c10::kCPU))
          .target_device(c10::Device(c10::kCPU))
          .make_tensor();
  copy_math_bits(t, host);
  return host;
}

void copy_math_bits(const at::Tensor& from, at::Tensor& to) {
  to.unsafeGetTensorImpl()->_set_conj(from.is_conj());
  to.unsafeGetTensorImpl()->_set_neg(from.is_neg());
}

HostAccess::HostAccess(const at::Tensor& t, Mode mode, Producers producers) : mode_(mode) {
  if (!t.defined() || !t.is_privateuseone()) {
    cpu_ = t;
    return;
  }
  const c10::DeviceIndex device = t.device().index();
  if (producers == Producers::kWait) wait_for_producers(device);
  if (host_addressable(device)) {
    cpu_ = host_view(t);
    return;
  }
  device_ = t;
  const size_t elem = t.element_size();
  if (t.numel() == 0) {
    cpu_ = at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kCPU));
    copy_math_bits(t, cpu_);
    return;
  }
  const auto [first, last] = element_span(t);
  const size_t bytes = (last - first + 1) * elem;
  span_first_ = first;
  staged_ = new c10::Storage(c10::Storage::use_byte_size_t(), bytes, c10::GetCPUAllocator(), /*resizable=*/false);
  char* device_bytes = static_cast<char*>(t.storage().mutable_data()) + first * elem;
  // A write-only access still reads when the span has gaps that would go back.
  const bool dense =
      t.is_non_overlapping_and_dense() && static_cast<int64_t>(bytes) == t.numel() * static_cast<int64_t>(elem);
  if (mode != Mode::kWrite || !dense) {
    staged_copy(device, staged_->mutable_data(), device_bytes, bytes, NHAL_COPY_DEVICE_TO_HOST);
    g_to_host_copies.fetch_add(1, std::memory_order_relaxed);
    g_to_host_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  cpu_ = at::empty({0}, t.options().device(c10::kCPU));
  cpu_.set_(*staged_, t.storage_offset() - first, t.sizes(), t.strides());
  copy_math_bits(t, cpu_);
}

HostAccess::HostAccess(HostAccess&& o) noexcept
    : device_(std::move(o.device_)),
      cpu_(std::move(o.cpu_)),
      staged_(o.staged_),
      span_first_(o.span_first_),
      mode_(o.mode_) {
  o.staged_ = nullptr;
}

void HostAccess::finish() {
  if (staged_ != nullptr && mode_ != Mode::kRead) {
    const size_t bytes = staged_->nbytes();
    char* device_bytes = static_cast<char*>(device_.storage().mutable_data()) + span_first_ * device_.element_size();
    staged_copy(device_.device().index(), device_bytes, staged_->data(), bytes, NHAL_COPY_HOST_TO_DEVICE);
    g_to_device_copies.fetch_add(1, std::memory_order_relaxed);
    g_to_device_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  delete staged_;
  staged_ = nullptr;
  device_ = at::Tensor();
}

HostAccess::~HostAccess() {
  if (staged_ == nullptr) return;
  if (std::uncaught_exceptions() > 0) {
    delete staged_;
    return;
  }
  try {
    finish();
  } catch (const std::exception& e) {
    TORCH_WARN("HostAccess: copying host results back to the device failed: ", e.what());
  }
}

StagingStats staging_stats() {
  return {g_to_host_copies.load(), g_to_host_bytes.load(), g_to_device_copies.load(), g_to_device_bytes.load()};
}

void reset_staging_stats() { g_to_host_copies = 0, g_to_host_bytes = 0, g_to_device_copies = 0, g_to_device_bytes = 0; }

}  // namespace torch_neuronx
