// Host access to device memory: the one place that decides whether code on the
// host CPU may read and write a device's memory, and the one way it waits for
// the device work that produced those bytes.
//
// Compute and collective transport run on the host by design (docs/architecture.md):
// every op kernel, collective and compiled graph that touches device memory
// from the host goes through this file. A driver whose devices report
// NHAL_DEVICE_CAP_HOST_ADDRESSABLE (the emulator's) gives the host the device
// bytes themselves (zero copies). Any other driver still works: HostAccess
// stages the bytes a tensor spans into host memory with the driver's copy,
// lets host code run on them, and copies written bytes back; every staged
// copy is counted (staging_stats()). The emulator withholds the capability
// with TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0, which tests use.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// Whether the host may dereference this device's memory (the driver's
// HOST_ADDRESSABLE capability, read once per device).
TORCH_NEURONX_API bool host_addressable(c10::DeviceIndex device);

// Waits until the work queued on the device's current stream has run, so host
// code that follows sees its results and does not overwrite bytes it still
// reads (free when the stream runs work inline, the emulator's default).
TORCH_NEURONX_API void wait_for_producers(c10::DeviceIndex device);
// Whether wait_for_producers(device) would block: work is still queued on the
// device's current stream (a query; never waits).
TORCH_NEURONX_API bool producers_pending(c10::DeviceIndex device);
// The same for the device of every neuron tensor among ts (others are skipped).
TORCH_NEURONX_API void wait_for_producers(c10::ArrayRef<at::Tensor> ts);

// A CPU tensor over the same bytes as neuron tensor t (sizes, strides, offset,
// conj/neg bits; it keeps t's storage alive). Throws unless t's device is
// host-addressable: code that may run on any driver uses HostAccess.
TORCH_NEURONX_API at::Tensor host_view(const at::Tensor& neuron_tensor);

// Carries the lazy conjugate and negative bits over to a host tensor.
TORCH_NEURONX_API void copy_math_bits(const at::Tensor& from, at::Tensor& to);

// A CPU tensor standing for neuron tensor t while host code reads or writes it.
// Construction waits for t's producers (kAlreadyWaited: the caller did, on the
// thread whose current stream produced t, as the process group does before it
// queues a collective). On a host-addressable device cpu() is
// host_view(t); otherwise it is a staged copy of the bytes t spans (read from
// the device unless the access is write-only), and finish() copies it back
// when the access writes. A CPU tensor passes through unchanged. finish()
// runs at destruction too, unless an exception is unwinding.
class TORCH_NEURONX_API HostAccess {
 public:
  enum class Mode { kRead, kWrite, kReadWrite };
  enum class Producers { kWait, kAlreadyWaited };
  HostAccess(const at::Tensor& t, Mode mode, Producers producers = Producers::kWait);
  ~HostAccess();
  HostAccess(const HostAccess&) = delete;
  HostAccess& operator=(const HostAccess&) = delete;
  HostAccess(HostAccess&&) noexcept;
  HostAccess& operator=(HostAccess&&) = delete;

  const at::Tensor& cpu() const { return cpu_; }
  // The first byte of cpu()'s elements.
  char* data() const { return static_cast<char*>(cpu_.data_ptr()); }
  bool staged() const { return staged_ != nullptr; }
  void finish();

 private:
  at::Tensor device_;  // the neuron tensor (undefined once finished or moved from)
  at::Tensor cpu_;
  c10::Storage* staged_ = nullptr;  // host copy of the spanned bytes, when staged
  int64_t span_first_ = 0;          // first spanned element of device_'s storage
  Mode mode_;
};

// Copies of device bytes staged for the host (and back), since the start.
struct StagingStats {
  uint64_t to_host_copies = 0, to_host_bytes = 0;
  uint64_t to_device_copies = 0, to_device_bytes = 0;
};
TORCH_NEURONX_API StagingStats staging_stats();
TORCH_NEURONX_API void reset_staging_stats();

}  // namespace torch_neuronx
