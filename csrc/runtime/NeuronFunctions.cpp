#include "runtime/NeuronFunctions.h"

#include <c10/util/Exception.h>

#include "runtime/NeuronHal.h"

namespace torch_neuronx {
namespace {
thread_local c10::DeviceIndex t_current_device = 0;
}

c10::DeviceIndex device_count() {
  // Fixed once the driver has opened (visibility is read at start-up), and
  // asked on every allocation and stream lookup: computed once. A failure
  // throws and is retried on the next call.
  static const c10::DeviceIndex count = [] {
    int n = 0;
    NEURON_HAL_CHECK(hal().device.count(&n));
    return static_cast<c10::DeviceIndex>(std::min(n, static_cast<int>(kMaxNeuronDevices)));
  }();
  return count;
}

c10::DeviceIndex device_count_ensure_non_zero_or_zero() noexcept {
  try {
    return device_count();
  } catch (...) {
    return 0;
  }
}

void check_device_index(c10::DeviceIndex device) {
  c10::DeviceIndex n = device_count();
  TORCH_CHECK(device >= 0 && device < n, "Invalid device index neuron:", static_cast<int>(device), ": ",
              static_cast<int>(n), " NeuronCore", n == 1 ? " is" : "s are", " visible (indices 0-",
              static_cast<int>(n) - 1,
              "). Pick an index in range; `python -m torch_neuronx info` lists the cores and the "
              "driver settings that make them visible.");
}

c10::DeviceIndex resolve_device(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  check_device_index(device);
  return device;
}

c10::DeviceIndex current_device() {
  hal();  // opens the driver, so a bad configuration is reported here too
  return t_current_device;
}

bool is_current_device(c10::DeviceIndex device) noexcept { return device == t_current_device; }

void set_device(c10::DeviceIndex device) {
  check_device_index(device);
  t_current_device = device;
}

c10::DeviceIndex exchange_device(c10::DeviceIndex device) {
  c10::DeviceIndex prev = current_device();
  if (device != prev) set_device(device);
  return prev;
}

nhal_device_properties device_properties(c10::DeviceIndex device) {
  nhal_device_properties p;
  NEURON_HAL_CHECK(hal().device.get_properties(resolve_device(device), &p));
  return p;
}

}  // namespace torch_neuronx
