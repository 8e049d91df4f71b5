// Device selection: count, current device (per thread), validation.
// Mirrors c10/cuda/CUDAFunctions.h.
#pragma once

#include <c10/core/Device.h>

#include "neuron_hal/device.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// c10::DeviceIndex is 8-bit: at most 127 devices per process.
constexpr int kMaxNeuronDevices = 127;

// Visible NeuronCores; starts the runtime. Throws if it cannot start.
TORCH_NEURONX_API c10::DeviceIndex device_count();
// As device_count(), but 0 when the runtime cannot start (for noexcept paths).
TORCH_NEURONX_API c10::DeviceIndex device_count_ensure_non_zero_or_zero() noexcept;

TORCH_NEURONX_API c10::DeviceIndex current_device();
TORCH_NEURONX_API void set_device(c10::DeviceIndex device);
// True if device is this thread's current device (no validation, no driver open).
TORCH_NEURONX_API bool is_current_device(c10::DeviceIndex device) noexcept;
// Swaps the current device; returns the previous one.
TORCH_NEURONX_API c10::DeviceIndex exchange_device(c10::DeviceIndex device);

// Throws a RuntimeError naming the index and the visible range unless valid.
TORCH_NEURONX_API void check_device_index(c10::DeviceIndex device);
// The index of d (current device for -1), validated.
TORCH_NEURONX_API c10::DeviceIndex resolve_device(c10::DeviceIndex device);

TORCH_NEURONX_API nhal_device_properties device_properties(c10::DeviceIndex device);

}  // namespace torch_neuronx
