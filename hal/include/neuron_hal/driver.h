/* Drivers: one table of operations per concept, chosen at run time.
 *
 * nhal_driver_open() picks the driver named by TORCH_NEURONX_DRIVER ("emu" by
 * default; "null" is the skeleton a hardware port starts from) and
 * initializes it once per process. A hardware driver fills the same tables
 * with calls into the Neuron runtime (nrt_*).
 *
 * What the tables cover today: device queries, memory (allocation, copies,
 * pinned host memory), streams, events and IPC (device memory other processes
 * map). What they do not: compute and
 * collective transport run on the host CPU by design, on device memory the
 * host addresses (NHAL_DEVICE_CAP_HOST_ADDRESSABLE) or, without that
 * capability, on copies the core stages through memory.copy. A driver without
 * the capability therefore runs every op, compiled graph and collective,
 * slowly; launching kernels and collectives on the device would be new tables.
 */
#ifndef NEURON_HAL_DRIVER_H
#define NEURON_HAL_DRIVER_H

#include "neuron_hal/device.h"
#include "neuron_hal/event.h"
#include "neuron_hal/ipc.h"
#include "neuron_hal/memory.h"
#include "neuron_hal/status.h"
#include "neuron_hal/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nhal_driver {
  const char* name;        /* "emu", "null", ... */
  const char* description; /* one line for `python -m torch_neuronx info` */
  /* Reads configuration and prepares the devices; called once. */
  nhal_status (*init)(void);
  /* A "KEY=value" line per setting in effect, '\n'-separated. Optional. */
  const char* (*describe_config)(void);
  nhal_device_ops device;
  nhal_memory_ops memory;
  nhal_stream_ops stream;
  nhal_event_ops event;
  nhal_ipc_ops ipc; /* all NULL: no sharing between processes */
} nhal_driver;

/* The driver named by name (NULL: TORCH_NEURONX_DRIVER, else "emu"),
 * initialized. Thread-safe; later calls return the same driver. */
NHAL_API nhal_status nhal_driver_open(const char* name, const nhal_driver** out_driver);

/* A built-in driver's table without initializing it (tests use this to run
 * one suite per driver). INVALID_ARGUMENT for an unknown name. */
NHAL_API nhal_status nhal_driver_lookup(const char* name, const nhal_driver** out_driver);

/* Comma-separated names of the built-in drivers. */
NHAL_API const char* nhal_driver_names(void);

#ifdef __cplusplus
}
#endif

#endif
