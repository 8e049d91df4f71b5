// Streams of the neuron device: c10::Stream values backed by HAL streams.
//
// Per device: stream id 0 is the default stream; ids 1..kPoolSize are a
// round-robin pool of normal-priority streams and the next kPoolSize ids a
// pool of high-priority (-1) streams, as in CUDA. HAL streams are created on
// first use and live for the process. The current stream is per thread and
// per device. Mirrors c10/cuda/CUDAStream.h.
#pragma once

#include <c10/core/Stream.h>

#include "neuron_hal/stream.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

constexpr int kStreamPoolSize = 8;

TORCH_NEURONX_API c10::Stream default_stream(c10::DeviceIndex device = -1);
TORCH_NEURONX_API c10::Stream current_stream(c10::DeviceIndex device = -1);
// The same for a device already validated (resolve_device): the allocator's per-op path.
TORCH_NEURONX_API c10::Stream current_stream_of_valid(c10::DeviceIndex device);
// Makes s current on its device for this thread; returns the previous one.
TORCH_NEURONX_API c10::Stream exchange_stream(c10::Stream s);
TORCH_NEURONX_API c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);

// 0 for the default and normal pool, -1 for the high-priority pool.
TORCH_NEURONX_API int stream_priority(c10::Stream s);
// The HAL stream behind s (created on first use). Throws on a foreign id.
TORCH_NEURONX_API nhal_stream hal_stream(c10::Stream s);

TORCH_NEURONX_API void synchronize_stream(c10::Stream s);
TORCH_NEURONX_API bool query_stream(c10::Stream s);

}  // namespace torch_neuronx
