// Sparse tensors on neuron, as CUDA has them: COO (a SparseTensorImpl with
// the SparsePrivateUse1 key) and the compressed layouts CSR, CSC, BSR, BSC (a
// SparseCsrTensorImpl with SparseCsrPrivateUse1), whose members (indices,
// values) are dense neuron tensors.
//
// ATen's own layout-generic kernels (the ones it registers for the CPU, CUDA
// and Meta sparse keys alike: construction, member access, nnz, dims, the
// coalesced flag, resize, zero, clone, copy) are registered for neuron as they
// are. Every other sparse op takes the host dispatch (NeuronHostDispatch.cpp),
// which hands the CPU's sparse kernel CPU sparse tensors over the same member
// memory and turns sparse results back into neuron ones (the helpers below).
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_compressed_tensor_with_dims_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <torch/library.h>

#include "dispatch/NeuronHostDispatch.h"

namespace torch_neuronx {

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", at::native::new_with_dims_and_tensor_sparse_symint);
  m.impl("empty.memory_format", at::native::empty_sparse);
  m.impl("empty_like", at::native::empty_like_sparse_coo);
  m.impl("copy_", at::native::copy_sparse_wrapper_);
  m.impl("_indices", at::native::_indices_sparse);
  m.impl("_values", at::native::_values_sparse);
  m.impl("indices", at::native::indices_sparse);
  m.impl("values", at::native::values_sparse);
  m.impl("_nnz", at::native::_nnz_sparse);
  m.impl("sparse_dim", at::native::sparse_dim_sparse);
  m.impl("dense_dim", at::native::dense_dim_sparse);
  m.impl("_dimI", at::native::sparse_dim_sparse);
  m.impl("_dimV", at::native::dense_dim_sparse);
  m.impl("is_coalesced", at::native::is_coalesced_sparse);
  m.impl("_coalesced_", at::native::_coalesced_sparse_);
  m.impl("sparse_resize_", at::native::sparse_resize_);
  m.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_);
  m.impl("zero_", at::native::zero_sparse_);
  m.impl("clone", at::native::clone_sparse);
  m.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
}

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("_sparse_compressed_tensor_with_dims", at::native::sparse_compressed_tensor_with_dims);
  m.impl("empty.memory_format", at::native::empty_sparse_compressed);
  m.impl("empty_like", at::native::empty_like_sparse_csr);
  m.impl("crow_indices", at::native::crow_indices_sparse_csr);
  m.impl("col_indices", at::native::col_indices_sparse_csr);
  m.impl("ccol_indices", at::native::ccol_indices_sparse_csr);
  m.impl("row_indices", at::native::row_indices_sparse_csr);
  m.impl("values", at::native::values_sparse_csr);
  m.impl("_nnz", at::native::_nnz_sparse_csr);
  m.impl("sparse_dim", at::native::sparse_dim_sparse_csr);
  m.impl("dense_dim", at::native::dense_dim_sparse_csr);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_compressed_);
  m.impl("zero_", at::native::zero_sparse_csr_);
  m.impl("clone", at::native::clone_sparse_compressed);
  m.impl("copy_", at::native::copy_sparse_compressed_);
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&host_dispatch>()); }

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&host_dispatch>());
}

}  // namespace torch_neuronx
