#include "runtime/NeuronSettings.h"

#include <c10/util/Exception.h>

#include <mutex>

#include "neuron_hal/settings.h"

namespace torch_neuronx {
namespace {

std::mutex g_mu;
std::string g_error;

}  // namespace

void set_settings_error(std::string message) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_error = std::move(message);
}

bool env_flag(const char* name, bool default_value) {
  int value = 0;
  const nhal_status st = nhal_env_flag(name, default_value ? 1 : 0, &value);
  TORCH_CHECK(st == NHAL_STATUS_OK, nhal_last_error_message());
  return value != 0;
}

void check_core_settings() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    TORCH_CHECK(g_error.empty(), g_error);
  }
  env_flag("TORCH_NEURONX_FALLBACK_WARN", true);
  env_flag("TORCH_NEURONX_DIRECT_COLLECTIVES", true);
}

}  // namespace torch_neuronx
