/* Settings from the environment, read by one rule wherever they are read.
 *
 * The table of every variable, with its accepted values and default, is
 * torch_neuronx/settings.py (docs/settings.md); the drivers and the core
 * parse their variables through these so that every reader agrees with it.
 * An unset or empty variable takes the default.
 */
#ifndef NEURON_HAL_SETTINGS_H
#define NEURON_HAL_SETTINGS_H

#include <stdint.h>

#include "neuron_hal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A boolean: 0/1, true/false, yes/no, on/off in any case. Anything else is
 * INVALID_ARGUMENT, with a message naming the variable, its value and what
 * it accepts. */
NHAL_API nhal_status nhal_env_flag(const char* name, int default_value, int* out);

/* A size in bytes: digits with an optional fraction and a K/M/G/T suffix
 * (1024-based; "KiB"/"KB" forms too), at least 1 byte. Anything else is
 * INVALID_ARGUMENT, as above; unset or empty leaves *out unchanged. */
NHAL_API nhal_status nhal_env_size(const char* name, uint64_t* out);

#ifdef __cplusplus
}
#endif

#endif
