// Neuron storages shared between processes on one host, as CUDA storages are
// by CUDA IPC: torch.multiprocessing sends a neuron tensor as a handle to the
// device memory under it, and the receiver maps the same memory.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Storage.h>

#include <cstdint>

#include "neuron_hal/ipc.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {

// The HAL's handle: plain bytes to send as they are (size: of the allocation;
// offset: where the storage's data starts in it).
using IpcHandle = nhal_ipc_handle;

// The device memory under storage, for another process; counts one open,
// which the receiver's storage ends when it dies. Waits for the device's queued
// work, so the receiver reads what was written before. The caching allocator
// keeps the block out of its pools until every receiver is done. Throws for a
// storage the allocator does not own (one received from a peer: clone it).
TORCH_NEURONX_API IpcHandle export_storage(const c10::Storage& storage);

// A storage of nbytes at handle.offset of a peer's exported memory, on device.
// Not resizable; freeing it unmaps the memory and ends the open.
TORCH_NEURONX_API c10::Storage open_storage(c10::DeviceIndex device, const IpcHandle& handle, size_t nbytes);

}  // namespace torch_neuronx
