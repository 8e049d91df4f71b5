/* Devices: the logical NeuronCores a driver exposes.
 *
 * Indices are dense, 0..count-1, after the driver applied its visibility rules
 * (NEURON_RT_VISIBLE_CORES / NEURON_RT_NUM_CORES on the emulator and on real
 * hardware).  Equivalent to: cudaGetDeviceCount / cudaGetDeviceProperties,
 * nrt_get_visible_nc_count.
 */
#ifndef NEURON_HAL_DEVICE_H
#define NEURON_HAL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "neuron_hal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory can be read and written by host code through its pointer
 * (true for the emulator, whose HBM is host RAM, unless
 * TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0). The core then runs host kernels and
 * collectives on device memory in place; without it, on staged copies. */
#define NHAL_DEVICE_CAP_HOST_ADDRESSABLE 0x1u

typedef struct nhal_device_properties {
  char name[64];             /* e.g. "NeuronCore-v3 (emulated, LNC=2)" */
  uint64_t total_memory;     /* bytes of device memory (HBM share) */
  uint32_t physical_core;    /* first physical core behind this logical core */
  uint32_t cores_per_device; /* physical cores per logical core (the LNC) */
  uint32_t capabilities;     /* NHAL_DEVICE_CAP_* bits */
} nhal_device_properties;

typedef struct nhal_device_ops {
  /* Number of visible devices; 0 is valid. Must not fail after init. */
  nhal_status (*count)(int* out_count);
  nhal_status (*get_properties)(int device, nhal_device_properties* out_props);
  /* Bytes free and total on a device. Equivalent to: cudaMemGetInfo. */
  nhal_status (*get_memory_info)(int device, uint64_t* out_free, uint64_t* out_total);
  /* Waits for all work queued on every stream of the device.
   * Equivalent to: cudaDeviceSynchronize. */
  nhal_status (*synchronize)(int device);
} nhal_device_ops;

#ifdef __cplusplus
}
#endif

#endif
