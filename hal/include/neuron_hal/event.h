/* Events: markers in a stream, for cross-stream ordering and timing.
 *
 * An event is "complete" once all work queued on its stream before the record
 * has run. A never-recorded event counts as complete (as in CUDA).
 * Equivalent to: cudaEvent_t.
 */
#ifndef NEURON_HAL_EVENT_H
#define NEURON_HAL_EVENT_H

#include "neuron_hal/status.h"
#include "neuron_hal/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nhal_event_s* nhal_event;

#define NHAL_EVENT_ENABLE_TIMING 0x1u

typedef struct nhal_event_ops {
  nhal_status (*create)(unsigned flags, nhal_event* out_event);
  /* Releases the handle at once, without waiting: queued work that records
   * or waits for the event still completes (cudaEventDestroy). */
  nhal_status (*destroy)(nhal_event event);
  /* Places the event at the current tail of the stream (cudaEventRecord). */
  nhal_status (*record)(nhal_event event, nhal_stream stream);
  /* Makes later work on stream wait for the event (cudaStreamWaitEvent). */
  nhal_status (*stream_wait)(nhal_stream stream, nhal_event event);
  /* OK when complete, NOT_READY otherwise (cudaEventQuery). */
  nhal_status (*query)(nhal_event event);
  /* Blocks until complete (cudaEventSynchronize). */
  nhal_status (*synchronize)(nhal_event event);
  /* Milliseconds between two completed, timed events (cudaEventElapsedTime).
   * INVALID_ARGUMENT if either lacks timing or was never recorded,
   * NOT_READY if either has not completed. */
  nhal_status (*elapsed_ms)(nhal_event start, nhal_event end, float* out_ms);
} nhal_event_ops;

#ifdef __cplusplus
}
#endif

#endif
