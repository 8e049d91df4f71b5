// histc. ATen's CPU kernel takes floating inputs only; CUDA's also takes
// integer inputs and returns a histogram of the input's dtype. Libraries that
// know the CPU's limit pick the integer path for every other device
// (Transformers' MoE routing counts tokens per expert with histc on int32), so
// neuron gives histc CUDA's contract: an integer input is counted exactly in
// double precision and the counts come back in the input's dtype.
#include <ATen/core/Tensor.h>
#include <ATen/ops/histc.h>
#include <torch/library.h>

#include "dispatch/NeuronHostDispatch.h"
#include "profiler/NeuronOpTracking.h"

namespace torch_neuronx {
namespace {

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max) {
  NEURON_COUNT_OP("aten::histc");
  return run_on_host(
             self.device(), {self},
             [&](const auto& h) {
               if (!at::isIntegralType(h[0].scalar_type(), /*includeBool=*/false)) {
                 return std::vector<at::Tensor>{at::histc(h[0], bins, min, max)};
               }
               return std::vector<at::Tensor>{at::histc(h[0].to(at::kDouble), bins, min, max).to(h[0].scalar_type())};
             })
      .front();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("histc", histc); }

}  // namespace torch_neuronx
