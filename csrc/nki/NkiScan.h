// The NKI emulator's host kernels: instructions whose steps depend on each
// other, which PyTorch has no single op for, run here in one pass.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "runtime/NeuronExport.h"

namespace torch_neuronx::nki {

// The binary ops of a scan, by code.
enum class ScanOp : int64_t { add = 0, subtract = 1, multiply = 2, maximum = 3, minimum = 4 };

// nisa.tensor_tensor_scan on the Vector engine, step by step in fp32:
// per partition p and free element i,
//   r[p][i] = op1(op0(data0[p][i], r[p][i-1]), data1[p][i]),  r[p][-1] = initial[p],
// with reverse0 / reverse1 swapping an op's operands. data0 and data1 are
// [P, F] float32 CPU tensors, initial a [P] float32 CPU tensor; returns [P, F].
TORCH_NEURONX_API at::Tensor tensor_tensor_scan(const at::Tensor& data0, const at::Tensor& data1,
                                                const at::Tensor& initial, int64_t op0, int64_t op1, bool reverse0,
                                                bool reverse1);

}  // namespace torch_neuronx::nki
