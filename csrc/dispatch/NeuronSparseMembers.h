// Sparse tensors as their dense members, for the host dispatch: a COO tensor
// is (indices, values), a compressed one (CSR, CSC, BSR, BSC) is (compressed
// indices, plain indices, values). The host dispatch aliases the members to
// build a CPU sparse tensor the CPU's kernels accept, and builds neuron sparse
// tensors from the members of the CPU's results.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace torch_neuronx {

bool is_supported_sparse_layout(c10::Layout layout);

// t's members; NotImplementedError naming the layout for any other layout.
std::vector<at::Tensor> sparse_members(const at::Tensor& t);

// A sparse tensor with like's layout, sizes, sparse/dense dims and coalesced
// flag, over members, on the members' device.
at::Tensor sparse_tensor_like(const at::Tensor& like, const std::vector<at::Tensor>& members);

// True if a and b have the same sizes and flags and their members the same
// memory and sizes (a kernel left the tensor as it was).
bool same_sparse_structure(const at::Tensor& a, const std::vector<at::Tensor>& a_members, const at::Tensor& b,
                           const std::vector<at::Tensor>& b_members);

// Makes t take like's sizes, dims and flags, over members (an in-place
// kernel's result written back to its argument).
void set_sparse_members(const at::Tensor& t, const at::Tensor& like, const std::vector<at::Tensor>& members);

}  // namespace torch_neuronx
