// The emulator's driver table: devices from the configuration, and the
// memory/stream/event tables of the sibling files.
#include <cstdio>

#include "../../loader/hal_error.h"
#include "emu_state.h"

namespace nhal::emu {

State& state() {
  static State* s = new State;  // leaked: streams may outlive static teardown
  return *s;
}

nhal_status check_device(int device) {
  int count = static_cast<int>(state().devices.size());
  if (device < 0 || device >= count) {
    return fail(NHAL_STATUS_OUT_OF_RANGE, "invalid device index neuron:%d; %d NeuronCore%s visible (indices 0-%d)",
                device, count, count == 1 ? " is" : "s are", count - 1);
  }
  return NHAL_STATUS_OK;
}

namespace {

nhal_status init() {
  State& s = state();
  nhal_status st = load_config(&s.config);
  if (st != NHAL_STATUS_OK) return st;
  for (size_t i = 0; i < s.config.visible.size(); ++i) {
    auto d = std::make_unique<DeviceState>();
    d->capacity = s.config.hbm_per_core;
    s.devices.push_back(std::move(d));
  }
  return NHAL_STATUS_OK;
}

const char* describe() { return state().config.description.c_str(); }

nhal_status count(int* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_count is null");
  *out = static_cast<int>(state().devices.size());
  return NHAL_STATUS_OK;
}

nhal_status properties(int device, nhal_device_properties* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_props is null");
  nhal_status st = check_device(device);
  if (st != NHAL_STATUS_OK) return st;
  const Config& c = state().config;
  *out = nhal_device_properties{};
  std::snprintf(out->name, sizeof(out->name), "NeuronCore-v3 (emulated Trainium2, LNC=%d)", c.lnc);
  out->total_memory = state().devices[device]->capacity;
  out->cores_per_device = static_cast<uint32_t>(c.lnc);
  out->physical_core = static_cast<uint32_t>(c.visible[device] * c.lnc);
  out->capabilities = c.host_addressable ? NHAL_DEVICE_CAP_HOST_ADDRESSABLE : 0u;
  return NHAL_STATUS_OK;
}

nhal_status memory_info(int device, uint64_t* out_free, uint64_t* out_total) {
  if (!out_free || !out_total) return fail(NHAL_STATUS_INVALID_ARGUMENT, "null output");
  nhal_status st = check_device(device);
  if (st != NHAL_STATUS_OK) return st;
  DeviceState& d = *state().devices[device];
  uint64_t used = d.used.load();
  *out_total = d.capacity;
  *out_free = d.capacity > used ? d.capacity - used : 0;
  return NHAL_STATUS_OK;
}

}  // namespace
}  // namespace nhal::emu

extern "C" const nhal_driver* nhal_emu_driver(void) {
  using namespace nhal::emu;
  static const nhal_driver driver = {
      "emu",
      "embedded NeuronCore emulator: device memory in host RAM, compute on the host CPU",
      init,
      describe,
      {count, properties, memory_info, synchronize_device},
      kMemoryOps,
      kStreamOps,
      kEventOps,
      kIpcOps,
  };
  return &driver;
}
