// Access to the HAL driver, and the one macro that turns a failed HAL call
// into a PyTorch exception (torch.OutOfMemoryError for memory, RuntimeError
// or NotImplementedError otherwise) with the status, the call and the place.
#pragma once

#include <c10/macros/Macros.h>

#include "neuron_hal/driver.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// The process's driver, opened on first use. Opening reads the configuration
// and answers device queries; it creates no threads and no device memory.
// Throws when the driver cannot start.
TORCH_NEURONX_API const nhal_driver& hal();

// Starts the runtime (is_initialized() becomes true). Called on the slow paths
// that create device state: the first stream, segment or pinned block. Throws
// in a child forked after the parent's runtime started: device state does not
// survive fork (use the 'spawn' start method).
TORCH_NEURONX_API void lazy_init();
// The fork check alone, for hot paths that reuse device state (one load).
TORCH_NEURONX_API void check_not_bad_fork();

TORCH_NEURONX_API bool is_initialized();

// True in a process forked from one whose runtime had started.
TORCH_NEURONX_API bool in_bad_fork();

[[noreturn]] TORCH_NEURONX_API void throw_hal_error(nhal_status status, const char* call, const char* file, int line);

}  // namespace torch_neuronx

#define NEURON_HAL_CHECK(expr)                                               \
  do {                                                                       \
    nhal_status _nhal_st = (expr);                                           \
    if (C10_UNLIKELY(_nhal_st != NHAL_STATUS_OK)) {                          \
      ::torch_neuronx::throw_hal_error(_nhal_st, #expr, __FILE__, __LINE__); \
    }                                                                        \
  } while (0)
