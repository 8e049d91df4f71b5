#include "emu_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "../../loader/hal_error.h"
#include "neuron_hal/settings.h"

namespace nhal::emu {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool parse_int(const std::string& s, long* out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

bool parse_core_list(const std::string& text, std::vector<int>* out) {
  std::vector<int> cores;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) return false;
    size_t dash = item.find('-');
    long lo = 0, hi = 0;
    if (dash == std::string::npos) {
      if (!parse_int(item, &lo)) return false;
      hi = lo;
    } else if (!parse_int(item.substr(0, dash), &lo) || !parse_int(item.substr(dash + 1), &hi)) {
      return false;
    }
    if (lo < 0 || hi < lo) return false;
    for (long c = lo; c <= hi; ++c) {
      if (std::find(cores.begin(), cores.end(), c) == cores.end()) cores.push_back(static_cast<int>(c));
    }
  }
  if (cores.empty()) return false;
  *out = cores;
  return true;
}

nhal_status load_config(Config* out) {
  Config c;
  std::string lnc = env("NEURON_LOGICAL_NC_CONFIG");
  if (!lnc.empty()) {
    if (lnc == "1")
      c.lnc = 1;
    else if (lnc == "2")
      c.lnc = 2;
    else
      return fail(NHAL_STATUS_INVALID_ARGUMENT,
                  "NEURON_LOGICAL_NC_CONFIG='%s' is not supported; use 1 (8 cores of "
                  "12 GiB per chip) or 2 (4 cores of 24 GiB, the default)",
                  lnc.c_str());
  }
  std::string chips = env("TORCH_NEURONX_EMU_CHIPS");
  if (!chips.empty()) {
    long n = 0;
    if (!parse_int(chips, &n) || n < 1 || n > 16) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "TORCH_NEURONX_EMU_CHIPS='%s' is not a chip count in 1..16",
                  chips.c_str());
    }
    c.chips = static_cast<int>(n);
  }
  const int logical_per_chip = kPhysicalCoresPerChip / c.lnc;
  const int total = logical_per_chip * c.chips;
  c.hbm_per_core = kHbmPerChip / logical_per_chip;
  if (nhal_status st = nhal_env_size("TORCH_NEURONX_EMU_HBM", &c.hbm_per_core); st != NHAL_STATUS_OK) return st;

  std::string visible = env("NEURON_RT_VISIBLE_CORES");
  if (!visible.empty()) {
    if (!parse_core_list(visible, &c.visible)) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT,
                  "NEURON_RT_VISIBLE_CORES='%s' is not a core list; use ids and ranges "
                  "such as '0-1,3'",
                  visible.c_str());
    }
    for (int core : c.visible) {
      if (core >= total) {
        return fail(NHAL_STATUS_OUT_OF_RANGE,
                    "NEURON_RT_VISIBLE_CORES='%s' names core %d, but the emulated "
                    "machine has %d logical cores (0-%d) at NEURON_LOGICAL_NC_CONFIG=%d",
                    visible.c_str(), core, total, total - 1, c.lnc);
      }
    }
  } else {
    for (int i = 0; i < total; ++i) c.visible.push_back(i);
  }
  std::string num = env("NEURON_RT_NUM_CORES");
  if (!num.empty()) {
    long n = 0;
    if (!parse_int(num, &n) || n < 0) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "NEURON_RT_NUM_CORES='%s' is not a core count", num.c_str());
    }
    if (n > static_cast<long>(c.visible.size())) {
      return fail(NHAL_STATUS_OUT_OF_RANGE, "NEURON_RT_NUM_CORES=%ld asks for more cores than the %zu visible ones", n,
                  c.visible.size());
    }
    c.visible.resize(static_cast<size_t>(n));
  }

  std::string queue = env("TORCH_NEURONX_EMU_QUEUE");
  if (queue.empty() || queue == "inline")
    c.queue = QueueMode::kInline;
  else if (queue == "thread")
    c.queue = QueueMode::kThread;
  else
    return fail(NHAL_STATUS_INVALID_ARGUMENT,
                "TORCH_NEURONX_EMU_QUEUE='%s' is not a queue mode; use 'inline' "
                "(the default) or 'thread'",
                queue.c_str());
  int flag = 0;
  if (nhal_status st = nhal_env_flag("NEURON_LAUNCH_BLOCKING", 0, &flag); st != NHAL_STATUS_OK) return st;
  c.launch_blocking = flag != 0;
  if (nhal_status st = nhal_env_flag("TORCH_NEURONX_EMU_HOST_ADDRESSABLE", 1, &flag); st != NHAL_STATUS_OK) {
    return st;
  }
  c.host_addressable = flag != 0;

  std::ostringstream d;
  d << "NEURON_LOGICAL_NC_CONFIG=" << c.lnc << "\n"
    << "TORCH_NEURONX_EMU_CHIPS=" << c.chips << "\n"
    << "TORCH_NEURONX_EMU_HBM=" << c.hbm_per_core << "\n"
    << "NEURON_RT_VISIBLE_CORES=";
  for (size_t i = 0; i < c.visible.size(); ++i) d << (i ? "," : "") << c.visible[i];
  d << "\nTORCH_NEURONX_EMU_QUEUE=" << (c.queue == QueueMode::kInline ? "inline" : "thread")
    << "\nNEURON_LAUNCH_BLOCKING=" << (c.launch_blocking ? 1 : 0)
    << "\nTORCH_NEURONX_EMU_HOST_ADDRESSABLE=" << (c.host_addressable ? 1 : 0);
  c.description = d.str();
  *out = c;
  return NHAL_STATUS_OK;
}

}  // namespace nhal::emu
