/* IPC: device memory that other processes on the host map.
 *
 * Equivalent to: cudaIpcGetMemHandle / cudaIpcOpenMemHandle. torch.multiprocessing
 * shares neuron tensors through it, as it shares CUDA tensors. A driver without
 * it leaves the table's slots NULL and sharing raises.
 *
 * Lifetime: an export that counts (count_open = 1: a tensor sent to another
 * process) adds one open, which the peer's close ends; the exporting process
 * must not reuse the memory while opens are outstanding (the core's caching
 * allocator keeps such blocks out of its pools until open_count is 0). A
 * transport that maps a peer's buffer for the length of one call, and keeps
 * the mapping only as a cache, exports and closes without counting. The
 * exporter must be alive when a peer opens the handle (as with CUDA IPC).
 */
#ifndef NEURON_HAL_IPC_H
#define NEURON_HAL_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "neuron_hal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a handle's driver-private part. */
#define NHAL_IPC_HANDLE_BYTES 48

/* An exported allocation, as plain bytes another process of this host can
 * open (send it as it is: it holds no descriptor of this process). */
typedef struct nhal_ipc_handle {
  uint64_t size;                               /* bytes of the allocation the handle maps */
  uint64_t offset;                             /* offset of the exported pointer inside the allocation */
  unsigned char opaque[NHAL_IPC_HANDLE_BYTES]; /* the driver's; equal bytes name the same allocation */
} nhal_ipc_handle;

typedef struct nhal_ipc_ops {
  /* The allocation (from memory.malloc) holding ptr, as a handle, counting one
   * open if count_open. INVALID_ARGUMENT if ptr is not inside shareable device
   * memory. */
  nhal_status (*export_handle)(const void* ptr, int count_open, nhal_ipc_handle* out);
  /* Maps a handle another process of this host exported (or this one), as
   * memory of device (device < 0: a transport's view, not device memory of
   * this process). *out_base is the allocation's start (add the handle's
   * offset). INVALID_ARGUMENT when the exporter has exited or freed it. */
  nhal_status (*open_handle)(int device, const nhal_ipc_handle* handle, void** out_base);
  /* Unmaps a base open_handle returned; ends one open if end_open. */
  nhal_status (*close_handle)(void* base, int end_open);
  /* Opens not yet closed of the allocation holding ptr (0 if never exported). */
  nhal_status (*open_count)(const void* ptr, int64_t* out_count);
} nhal_ipc_ops;

#ifdef __cplusplus
}
#endif

#endif
