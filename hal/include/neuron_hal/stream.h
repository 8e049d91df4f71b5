/* Streams: in-order queues of work on one device.
 *
 * Work submitted to a stream runs in submission order; work on different
 * streams is unordered unless joined by events. A driver may run a queue on a
 * worker thread or on the submitting thread (the emulator does either, see
 * TORCH_NEURONX_EMU_QUEUE); both keep these contracts.
 * Equivalent to: cudaStream_t, an NRT execution queue.
 */
#ifndef NEURON_HAL_STREAM_H
#define NEURON_HAL_STREAM_H

#include "neuron_hal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nhal_stream_s* nhal_stream;

/* A unit of host-side work run in stream order (a copy, a kernel). */
typedef void (*nhal_host_fn)(void* user_data);

typedef struct nhal_stream_ops {
  /* priority: 0 normal, negative is higher (as in CUDA). Equivalent to:
   * cudaStreamCreateWithPriority. */
  nhal_status (*create)(int device, int priority, nhal_stream* out_stream);
  /* Waits for the stream's queued work, then releases it. */
  nhal_status (*destroy)(nhal_stream stream);
  /* Queues fn(user_data) behind the stream's earlier work. fn must not throw.
   * Equivalent to: cudaLaunchHostFunc. */
  nhal_status (*launch)(nhal_stream stream, nhal_host_fn fn, void* user_data);
  /* Blocks until every item queued so far has run. Equivalent to:
   * cudaStreamSynchronize. */
  nhal_status (*synchronize)(nhal_stream stream);
  /* OK when idle, NOT_READY while work is queued. Equivalent to:
   * cudaStreamQuery. */
  nhal_status (*query)(nhal_stream stream);
} nhal_stream_ops;

#ifdef __cplusplus
}
#endif

#endif
