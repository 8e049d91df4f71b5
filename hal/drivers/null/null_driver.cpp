// The null driver: every operation answers UNIMPLEMENTED (device count 0).
// It is the template a hardware port starts from: copy this file, then fill
// each slot with the matching Neuron runtime call named in the headers.
#include "../../loader/hal_error.h"
#include "neuron_hal/driver.h"

namespace {

nhal_status unimplemented(const char* what) {
  return nhal::fail(NHAL_STATUS_UNIMPLEMENTED,
                    "the null NeuronCore driver does not implement %s; set "
                    "TORCH_NEURONX_DRIVER=emu for the emulator",
                    what);
}

nhal_status init() { return NHAL_STATUS_OK; }
nhal_status count(int* out) {
  if (!out) return nhal::fail(NHAL_STATUS_INVALID_ARGUMENT, "out_count is null");
  *out = 0;
  return NHAL_STATUS_OK;
}
nhal_status props(int, nhal_device_properties*) { return unimplemented("device.get_properties"); }
nhal_status mem_info(int, uint64_t*, uint64_t*) { return unimplemented("device.get_memory_info"); }
nhal_status dev_sync(int) { return unimplemented("device.synchronize"); }
nhal_status mem_malloc(int, size_t, void**) { return unimplemented("memory.malloc"); }
nhal_status mem_free(void*) { return unimplemented("memory.free"); }
nhal_status mem_device_of(const void*, int*) { return unimplemented("memory.device_of"); }
nhal_status mem_copy(nhal_stream, void*, const void*, size_t, nhal_copy_kind) { return unimplemented("memory.copy"); }
nhal_status host_alloc(size_t, void**) { return unimplemented("memory.host_alloc"); }
nhal_status host_free(void*) { return unimplemented("memory.host_free"); }
nhal_status s_create(int, int, nhal_stream*) { return unimplemented("stream.create"); }
nhal_status s_destroy(nhal_stream) { return unimplemented("stream.destroy"); }
nhal_status s_launch(nhal_stream, nhal_host_fn, void*) { return unimplemented("stream.launch"); }
nhal_status s_sync(nhal_stream) { return unimplemented("stream.synchronize"); }
nhal_status s_query(nhal_stream) { return unimplemented("stream.query"); }
nhal_status e_create(unsigned, nhal_event*) { return unimplemented("event.create"); }
nhal_status e_destroy(nhal_event) { return unimplemented("event.destroy"); }
nhal_status e_record(nhal_event, nhal_stream) { return unimplemented("event.record"); }
nhal_status e_wait(nhal_stream, nhal_event) { return unimplemented("event.stream_wait"); }
nhal_status e_query(nhal_event) { return unimplemented("event.query"); }
nhal_status e_sync(nhal_event) { return unimplemented("event.synchronize"); }
nhal_status e_elapsed(nhal_event, nhal_event, float*) { return unimplemented("event.elapsed_ms"); }

const nhal_driver kNullDriver = {
    "null",
    "skeleton driver: no devices, every call UNIMPLEMENTED",
    init,
    nullptr,
    {count, props, mem_info, dev_sync},
    {mem_malloc, mem_free, mem_device_of, mem_copy, host_alloc, host_free, nullptr},
    {s_create, s_destroy, s_launch, s_sync, s_query},
    {e_create, e_destroy, e_record, e_wait, e_query, e_sync, e_elapsed},
    {nullptr, nullptr, nullptr, nullptr},  // no IPC: sharing raises
};

}  // namespace

extern "C" const nhal_driver* nhal_null_driver(void) { return &kNullDriver; }
