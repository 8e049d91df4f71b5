// Argument checks and conversions shared by the neuron process group's
// calls: each throws a c10 error naming the call and the bad value.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <exception>
#include <vector>

#include "distributed/collectives/Collectives.h"

namespace torch_neuronx::dist::args {

// A DistBackendError (torch.distributed.DistBackendError in Python) with e's text.
std::exception_ptr as_dist_backend_error(const std::exception& e);

// Strided, contiguous, on neuron (or CPU), of a supported dtype.
void check_tensor(const at::Tensor& t, const char* what);
// The one tensor of a single-tensor call, checked.
const at::Tensor& single(const std::vector<at::Tensor>& ts, const char* what);
// check_tensor, and t holds like's element count and dtype.
void check_like(const at::Tensor& t, const at::Tensor& like, const char* what, const char* role);
ReduceSpec reduce_spec(const c10d::ReduceOp& op, c10::ScalarType dtype, const char* what);
// A HostCall of t's dtype and element count (buffers set on the worker).
HostCall call_of(const at::Tensor& t);

}  // namespace torch_neuronx::dist::args
