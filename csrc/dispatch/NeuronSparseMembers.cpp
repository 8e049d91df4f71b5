// Sparse tensors as their dense members (see the header).
#include "dispatch/NeuronSparseMembers.h"

#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_sparse_compressed_tensor_unsafe.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors.h>

namespace torch_neuronx {
bool is_supported_sparse_layout(c10::Layout layout) {
  return layout == c10::kSparse || layout == c10::kSparseCsr || layout == c10::kSparseCsc ||
         layout == c10::kSparseBsr || layout == c10::kSparseBsc;
}

std::vector<at::Tensor> sparse_members(const at::Tensor& t) {
  switch (t.layout()) {
    case c10::kSparse:
      return {t._indices(), t._values()};
    case c10::kSparseCsr:
    case c10::kSparseBsr:
      return {t.crow_indices(), t.col_indices(), t.values()};
    case c10::kSparseCsc:
    case c10::kSparseBsc:
      return {t.ccol_indices(), t.row_indices(), t.values()};
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "neuron: ", t.layout(), " tensors are not supported on neuron; strided ",
                                  "and sparse (COO, CSR, CSC, BSR, BSC) tensors are");
  }
}

at::Tensor sparse_tensor_like(const at::Tensor& like, const std::vector<at::Tensor>& members) {
  const at::Tensor& values = members.back();
  if (like.layout() == c10::kSparse) {
    return at::_sparse_coo_tensor_with_dims_and_tensors(like.sparse_dim(), like.dense_dim(), like.sizes(), members[0],
                                                        values, values.options().layout(c10::kSparse),
                                                        like.is_coalesced());
  }
  return at::_sparse_compressed_tensor_unsafe(members[0], members[1], values, like.sizes(),
                                              values.options().layout(like.layout()));
}

bool same_sparse_structure(const at::Tensor& a, const std::vector<at::Tensor>& a_members, const at::Tensor& b,
                           const std::vector<at::Tensor>& b_members) {
  if (a.sizes() != b.sizes() || (a.layout() == c10::kSparse && a.is_coalesced() != b.is_coalesced())) return false;
  for (size_t i = 0; i < a_members.size(); ++i) {
    if (a_members[i].data_ptr() != b_members[i].data_ptr() || a_members[i].sizes() != b_members[i].sizes()) {
      return false;
    }
  }
  return true;
}

void set_sparse_members(const at::Tensor& t, const at::Tensor& like, const std::vector<at::Tensor>& members) {
  if (t.layout() == c10::kSparse) {
    auto* impl = static_cast<at::SparseTensorImpl*>(t.unsafeGetTensorImpl());
    impl->raw_resize_(like.sparse_dim(), like.dense_dim(), like.sizes());
    impl->set_indices_and_values_unsafe(members[0], members[1]);
    impl->set_coalesced(like.is_coalesced());
  } else {
    auto* impl = static_cast<at::SparseCsrTensorImpl*>(t.unsafeGetTensorImpl());
    impl->set_member_tensors(members[0], members[1], members[2], like.sizes());
  }
}

}  // namespace torch_neuronx
