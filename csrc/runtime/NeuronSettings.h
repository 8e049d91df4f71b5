// The core's own environment settings (the table of every variable:
// torch_neuronx/settings.py, docs/settings.md), parsed by the HAL's rules
// (neuron_hal/settings.h). A value that does not parse throws a c10::Error
// naming the variable and what it accepts; lazy_init checks every one, so a
// bad value fails at the device's first use, never at import.
#pragma once

#include <string>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// A boolean setting; default_value when unset or empty.
TORCH_NEURONX_API bool env_flag(const char* name, bool default_value);

// What the Python package found wrong with the settings it parses (empty:
// nothing), raised by check_core_settings: import only warns about it.
TORCH_NEURONX_API void set_settings_error(std::string message);

// Throws for the first setting that does not parse (the package's, then the
// core's own).
TORCH_NEURONX_API void check_core_settings();

}  // namespace torch_neuronx
