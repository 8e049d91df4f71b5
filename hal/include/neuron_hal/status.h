/* Status codes of the NeuronCore HAL.
 *
 * Every HAL call returns an nhal_status. A failing call also leaves a
 * human-readable message, with the offending values in it, that
 * nhal_last_error_message() returns on the same thread until the next failing
 * call.  Equivalent to: cudaError_t + cudaGetErrorString, NRT_STATUS.
 */
#ifndef NEURON_HAL_STATUS_H
#define NEURON_HAL_STATUS_H

#include "neuron_hal/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nhal_status {
  NHAL_STATUS_OK = 0,
  NHAL_STATUS_INVALID_ARGUMENT = 1,   /* a null pointer, a bad flag, a bad size */
  NHAL_STATUS_OUT_OF_RANGE = 2,       /* a device index outside [0, count) */
  NHAL_STATUS_OUT_OF_MEMORY = 3,      /* the device's capacity would be exceeded */
  NHAL_STATUS_HOST_OUT_OF_MEMORY = 4, /* the host could not back an allocation */
  NHAL_STATUS_NOT_READY = 5,          /* queried work has not completed yet */
  NHAL_STATUS_UNIMPLEMENTED = 6,      /* the driver does not provide this call */
  NHAL_STATUS_INTERNAL = 7            /* a driver bug or a broken invariant */
} nhal_status;

/* "OK", "INVALID_ARGUMENT", ...; never null. */
NHAL_API const char* nhal_status_name(nhal_status status);

/* Message of the last failing call on this thread ("" if none). */
NHAL_API const char* nhal_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif
