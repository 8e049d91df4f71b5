// Built-in driver table and the once-per-process initialization.
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "hal_error.h"
#include "neuron_hal/driver.h"

extern "C" const nhal_driver* nhal_emu_driver(void);
extern "C" const nhal_driver* nhal_null_driver(void);

namespace {

struct Entry {
  const char* name;
  const nhal_driver* (*get)(void);
  std::once_flag once;
  nhal_status init_status = NHAL_STATUS_OK;
  std::string init_message;
};

Entry g_entries[] = {{"emu", nhal_emu_driver, {}, NHAL_STATUS_OK, {}},
                     {"null", nhal_null_driver, {}, NHAL_STATUS_OK, {}}};

Entry* find(const char* name) {
  for (auto& e : g_entries) {
    if (std::strcmp(e.name, name) == 0) return &e;
  }
  return nullptr;
}

}  // namespace

extern "C" const char* nhal_driver_names(void) { return "emu,null"; }

extern "C" nhal_status nhal_driver_lookup(const char* name, const nhal_driver** out_driver) {
  if (!out_driver) return nhal::fail(NHAL_STATUS_INVALID_ARGUMENT, "out_driver is null");
  Entry* e = find(name ? name : "emu");
  if (!e) {
    return nhal::fail(NHAL_STATUS_INVALID_ARGUMENT, "unknown NeuronCore driver '%s'; built-in drivers: %s", name,
                      nhal_driver_names());
  }
  *out_driver = e->get();
  return NHAL_STATUS_OK;
}

extern "C" nhal_status nhal_driver_open(const char* name, const nhal_driver** out_driver) {
  if (!name) {
    const char* env = std::getenv("TORCH_NEURONX_DRIVER");
    name = (env && *env) ? env : "emu";
  }
  const nhal_driver* driver = nullptr;
  nhal_status st = nhal_driver_lookup(name, &driver);
  if (st != NHAL_STATUS_OK) return st;
  Entry* e = find(name);
  std::call_once(e->once, [&] {
    e->init_status = driver->init();
    if (e->init_status != NHAL_STATUS_OK) e->init_message = nhal_last_error_message();
  });
  if (e->init_status != NHAL_STATUS_OK) {
    return nhal::fail(e->init_status, "%s", e->init_message.c_str());
  }
  *out_driver = driver;
  return NHAL_STATUS_OK;
}
