// Elementwise reductions for collectives: dst[i] = dst[i] op src[i], for the
// dtypes and ops the neuron process group supports. Plain loops over
// contiguous memory that the compiler vectorizes; 16-bit floats reduce in
// float and round once per step, as gloo does.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <string>

#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

enum class Reduce { kSum, kProduct, kMin, kMax, kBand, kBor, kBxor };

// Empty if (dtype, op) is supported, else why not.
TORCH_NEURONX_API std::string unsupported_reason(c10::ScalarType dtype, Reduce op);

TORCH_NEURONX_API void reduce_into(void* dst, const void* src, size_t numel, c10::ScalarType dtype, Reduce op);

// dst[i] = dst[i] / factor (divide: AVG) or dst[i] * factor (PREMUL_SUM), in
// float (double for float64) and rounded once; floating dtypes only.
TORCH_NEURONX_API void scale(void* dst, size_t numel, c10::ScalarType dtype, double factor, bool divide);

}  // namespace torch_neuronx::dist
