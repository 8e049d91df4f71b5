#include "nki/NkiScan.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>

namespace torch_neuronx::nki {
namespace {

inline float apply(ScanOp op, float a, float b) {
  switch (op) {
    case ScanOp::add:
      return a + b;
    case ScanOp::subtract:
      return a - b;
    case ScanOp::multiply:
      return a * b;
    case ScanOp::maximum:
      return std::max(a, b);
    case ScanOp::minimum:
      return std::min(a, b);
  }
  return a;
}

ScanOp checked(int64_t code) {
  TORCH_CHECK(code >= 0 && code <= 4, "tensor_tensor_scan: unknown op code ", code,
              " (add 0, subtract 1, multiply 2, maximum 3, minimum 4)");
  return static_cast<ScanOp>(code);
}

}  // namespace

at::Tensor tensor_tensor_scan(const at::Tensor& data0, const at::Tensor& data1, const at::Tensor& initial, int64_t op0,
                              int64_t op1, bool reverse0, bool reverse1) {
  TORCH_CHECK(data0.device().is_cpu() && data1.device().is_cpu() && initial.device().is_cpu(),
              "tensor_tensor_scan takes CPU tensors");
  TORCH_CHECK(
      data0.scalar_type() == at::kFloat && data1.scalar_type() == at::kFloat && initial.scalar_type() == at::kFloat,
      "tensor_tensor_scan computes in float32");
  TORCH_CHECK(data0.dim() == 2 && data0.sizes() == data1.sizes() && initial.numel() == data0.size(0),
              "tensor_tensor_scan: data0 and data1 are [P, F] and initial [P]");
  const ScanOp f0 = checked(op0), f1 = checked(op1);
  const at::Tensor x = data0.contiguous(), y = data1.contiguous(), r0 = initial.contiguous();
  const int64_t parts = x.size(0), width = x.size(1);
  at::Tensor out = at::empty({parts, width}, x.options());
  const float* px = x.const_data_ptr<float>();
  const float* py = y.const_data_ptr<float>();
  float* po = out.mutable_data_ptr<float>();
  for (int64_t p = 0; p < parts; ++p) {
    float prev = r0.const_data_ptr<float>()[p];
    const float* rx = px + p * width;
    const float* ry = py + p * width;
    float* ro = po + p * width;
    for (int64_t i = 0; i < width; ++i) {
      const float t = reverse0 ? apply(f0, prev, rx[i]) : apply(f0, rx[i], prev);
      prev = reverse1 ? apply(f1, ry[i], t) : apply(f1, t, ry[i]);
      ro[i] = prev;
    }
  }
  return out;
}

}  // namespace torch_neuronx::nki
