#include "aten/NeuronHostAccess.h"

#include <ATen/ops/from_blob.h>
#include <c10/util/Exception.h>

#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx {

at::Tensor host_view(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "host_view expects a neuron tensor, got a ",
              t.device(), " tensor; please report the call");
  static const bool addressable = [] {
    return (device_properties(0).capabilities & NHAL_DEVICE_CAP_HOST_ADDRESSABLE) != 0;
  }();
  TORCH_CHECK(addressable, "the NeuronCore driver '", hal().name,
              "' does not expose device memory to the host, which this operation needs");
  c10::Storage keep = t.storage();
  char* first = static_cast<char*>(t.storage().mutable_data());
  if (first) first += t.storage_offset() * static_cast<int64_t>(t.element_size());
  at::Tensor host = at::for_blob(first, t.sizes())
                        .strides(t.strides())
                        .context(new c10::Storage(std::move(keep)),
                                 [](void* ctx) { delete static_cast<c10::Storage*>(ctx); })
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

void prepare_host_access(c10::DeviceIndex device) {
  c10::Stream s = current_stream(device);
  nhal_status st = hal().stream.query(hal_stream(s));
  if (st == NHAL_STATUS_NOT_READY) synchronize_stream(s);
  else NEURON_HAL_CHECK(st);
}

}  // namespace torch_neuronx
