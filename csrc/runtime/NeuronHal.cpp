#include "runtime/NeuronHal.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <string>

#include <c10/util/Exception.h>

#include "runtime/NeuronSettings.h"

namespace torch_neuronx {
namespace {

std::atomic<const nhal_driver*> g_driver{nullptr};
std::atomic<bool> g_initialized{false};
std::atomic<bool> g_bad_fork{false};
std::mutex g_init_mutex;

void on_fork_child() {
  if (g_initialized.load()) g_bad_fork = true;
  g_initialized = false;
}

}  // namespace

bool in_bad_fork() { return g_bad_fork.load(); }

bool is_initialized() { return g_initialized.load(); }

void check_not_bad_fork() {
  TORCH_CHECK(!g_bad_fork.load(std::memory_order_relaxed),
              "Cannot use the neuron device in a process forked after the NeuronCore runtime "
              "started. Use the 'spawn' start method (multiprocessing.set_start_method('spawn') "
              "or torch.multiprocessing.spawn), or start the runtime only in the children.");
}

void lazy_init() {
  check_not_bad_fork();
  if (C10_LIKELY(g_initialized.load(std::memory_order_acquire))) return;
  check_core_settings();
  hal();
  g_initialized.store(true, std::memory_order_release);
}

const nhal_driver& hal() {
  const nhal_driver* d = g_driver.load(std::memory_order_acquire);
  if (C10_LIKELY(d != nullptr)) return *d;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  d = g_driver.load();
  if (d) return *d;
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  const nhal_driver* opened = nullptr;
  nhal_status st = nhal_driver_open(nullptr, &opened);
  if (st != NHAL_STATUS_OK) throw_hal_error(st, "nhal_driver_open", __FILE__, __LINE__);
  g_driver.store(opened, std::memory_order_release);
  return *opened;
}

void throw_hal_error(nhal_status status, const char* call, const char* file, int line) {
  std::string msg = nhal_last_error_message();
  std::string where = std::string(" [NeuronCore HAL ") + nhal_status_name(status) + " from " + call + " at " + file +
                      ":" + std::to_string(line) + "]";
  switch (status) {
    case NHAL_STATUS_OUT_OF_MEMORY:
    case NHAL_STATUS_HOST_OUT_OF_MEMORY:
      TORCH_CHECK_WITH(OutOfMemoryError, false, msg, where);
    case NHAL_STATUS_UNIMPLEMENTED:
      TORCH_CHECK_NOT_IMPLEMENTED(false, msg, where);
    default:
      TORCH_CHECK(false, msg, where);
  }
}

}  // namespace torch_neuronx
