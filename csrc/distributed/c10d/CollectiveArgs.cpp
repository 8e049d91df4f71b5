#include "distributed/c10d/CollectiveArgs.h"

#include <c10/util/Exception.h>

namespace torch_neuronx::dist::args {

std::exception_ptr as_dist_backend_error(const std::exception& e) {
  try {
    TORCH_CHECK_WITH(DistBackendError, false, e.what());
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void check_tensor(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.defined() && t.layout() == c10::kStrided, what, ": expected a strided tensor");
  TORCH_CHECK(t.is_privateuseone() || t.is_cpu(), what, ": the neuron backend takes neuron tensors, got one on ",
              t.device(), " (use a cpu:gloo,neuron:neuron backend for CPU collectives)");
  TORCH_CHECK(t.is_contiguous(), what, ": tensors must be contiguous (call .contiguous() first)");
  std::string why = unsupported_reason(t.scalar_type(), Reduce::kSum);
  TORCH_CHECK(why.empty(), what, ": ", why);
}

const at::Tensor& single(const std::vector<at::Tensor>& ts, const char* what) {
  TORCH_CHECK(ts.size() == 1, what, ": the neuron backend takes one tensor per call, got ", ts.size());
  check_tensor(ts[0], what);
  return ts[0];
}

ReduceSpec reduce_spec(const c10d::ReduceOp& op, c10::ScalarType dtype, const char* what) {
  ReduceSpec spec;
  spec.code = static_cast<int64_t>(op.op_);
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      spec.op = Reduce::kSum;
      break;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(c10::isFloatingType(dtype), what, ": ReduceOp.AVG needs a floating dtype, got ", dtype);
      spec.op = Reduce::kSum;
      spec.average = true;
      break;
    case c10d::ReduceOp::PRODUCT:
      spec.op = Reduce::kProduct;
      break;
    case c10d::ReduceOp::MIN:
      spec.op = Reduce::kMin;
      break;
    case c10d::ReduceOp::MAX:
      spec.op = Reduce::kMax;
      break;
    case c10d::ReduceOp::BAND:
      spec.op = Reduce::kBand;
      break;
    case c10d::ReduceOp::BOR:
      spec.op = Reduce::kBor;
      break;
    case c10d::ReduceOp::BXOR:
      spec.op = Reduce::kBxor;
      break;
    case c10d::ReduceOp::PREMUL_SUM: {
      TORCH_CHECK(c10::isFloatingType(dtype), what, ": PREMUL_SUM needs a floating dtype, got ", dtype);
      auto* sup = dynamic_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK(sup != nullptr, what, ": PREMUL_SUM without its factor");
      spec.op = Reduce::kSum;
      spec.premul = sup->tensor_factor.defined() ? sup->tensor_factor.item<double>() : sup->double_factor;
      break;
    }
    default:
      TORCH_CHECK(false, what, ": reduce op ", static_cast<int>(op.op_), " is not supported");
  }
  std::string why = unsupported_reason(dtype, spec.op);
  TORCH_CHECK(why.empty(), what, ": ", why);
  return spec;
}

void check_like(const at::Tensor& t, const at::Tensor& like, const char* what, const char* role) {
  check_tensor(t, what);
  TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), what, ": every ", role,
              " tensor must hold ", like.numel(), " elements of ", like.scalar_type(), ", got ", t.numel(), " x ",
              t.scalar_type());
}

HostCall call_of(const at::Tensor& t) {
  HostCall call;
  call.dtype = t.scalar_type();
  call.numel = static_cast<size_t>(t.numel());
  return call;
}

}  // namespace torch_neuronx::dist::args
