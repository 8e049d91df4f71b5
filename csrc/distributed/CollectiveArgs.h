// Argument checks and conversions shared by the neuron process group's
// calls: each throws a c10 error naming the call and the bad value.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <exception>
#include <vector>

#include "distributed/ShmCollectives.h"

namespace torch_neuronx::dist::args {

// A DistBackendError (torch.distributed.DistBackendError in Python) with e's text.
std::exception_ptr as_dist_backend_error(const std::exception& e);

// Strided, contiguous, on neuron (or CPU), of a supported dtype.
void check_tensor(const at::Tensor& t, const char* what);
// The one tensor of a single-tensor call, checked.
const at::Tensor& single(const std::vector<at::Tensor>& ts, const char* what);
void check_root(int64_t root, int world, const char* what);
ReduceSpec reduce_spec(const c10d::ReduceOp& op, c10::ScalarType dtype, const char* what);
// Inputs are ready once the caller's current stream reached this point.
void wait_for_producers(const std::vector<at::Tensor>& ts);

}  // namespace torch_neuronx::dist::args
