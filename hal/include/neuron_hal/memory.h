/* Memory: device memory, pinned host memory, and copies between them.
 *
 * Device allocations are accounted against the device's capacity before any
 * host resource is touched; exceeding it is OUT_OF_MEMORY (with the device,
 * the request, the use and the capacity in the message). The caching
 * allocator of the core sits above this and calls it rarely.
 */
#ifndef NEURON_HAL_MEMORY_H
#define NEURON_HAL_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "neuron_hal/status.h"
#include "neuron_hal/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nhal_copy_kind {
  NHAL_COPY_HOST_TO_DEVICE = 0,
  NHAL_COPY_DEVICE_TO_HOST = 1,
  NHAL_COPY_DEVICE_TO_DEVICE = 2 /* same or different devices */
} nhal_copy_kind;

typedef struct nhal_memory_ops {
  /* Equivalent to: cudaMalloc / nrt_tensor_allocate. size 0 gives a null ptr. */
  nhal_status (*malloc)(int device, size_t size, void** out_ptr);
  /* Equivalent to: cudaFree. The caller guarantees no queued work uses it. */
  nhal_status (*free)(void* ptr);
  /* Device owning a pointer anywhere inside a live allocation, else
   * INVALID_ARGUMENT. Equivalent to: cudaPointerGetAttributes. */
  nhal_status (*device_of)(const void* ptr, int* out_device);
  /* Queues a copy of n bytes on stream. Host memory that is not pinned must
   * stay valid until the copy ran (synchronize the stream before reuse).
   * Equivalent to: cudaMemcpyAsync. */
  nhal_status (*copy)(nhal_stream stream, void* dst, const void* src, size_t n, nhal_copy_kind kind);
  /* Page-locked host memory for asynchronous copies (cudaHostAlloc). */
  nhal_status (*host_alloc)(size_t size, void** out_ptr);
  nhal_status (*host_free)(void* ptr);
  /* 1 if ptr lies inside a live host_alloc block, else 0. Optional. */
  int (*host_is_pinned)(const void* ptr);
} nhal_memory_ops;

#ifdef __cplusplus
}
#endif

#endif
