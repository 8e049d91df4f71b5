// The emulator's configuration, read once from the environment at init.
// Every knob is in the table of torch_neuronx/settings.py (docs/settings.md); defaults emulate one Trainium2
// chip (8 physical NeuronCore-v3, 96 GiB HBM) at LNC=2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuron_hal/status.h"

namespace nhal::emu {

enum class QueueMode { kInline, kThread };

struct Config {
  int lnc = 2;                           // NEURON_LOGICAL_NC_CONFIG: 1 or 2
  int chips = 1;                         // TORCH_NEURONX_EMU_CHIPS
  uint64_t hbm_per_core = 0;             // per logical core (TORCH_NEURONX_EMU_HBM)
  std::vector<int> visible;              // logical core id of each visible device
  QueueMode queue = QueueMode::kInline;  // TORCH_NEURONX_EMU_QUEUE
  bool launch_blocking = false;          // NEURON_LAUNCH_BLOCKING=1
  bool host_addressable = true;          // TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0 withholds the capability
  std::string description;               // KEY=value lines for describe_config
};

// Physical facts of the emulated chip (see shared docs/trainium.md).
constexpr int kPhysicalCoresPerChip = 8;
constexpr uint64_t kHbmPerChip = 96ull << 30;

// Parses the environment; INVALID_ARGUMENT names the variable and the value.
nhal_status load_config(Config* out);

// Parses "0-1,3" into {0,1,3}; false on a bad string.
bool parse_core_list(const std::string& text, std::vector<int>* out);

}  // namespace nhal::emu
