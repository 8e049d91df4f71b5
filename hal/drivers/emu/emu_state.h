// Process-wide state of the emulator, shared by its concept files.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emu_config.h"
#include "neuron_hal/driver.h"

namespace nhal::emu {

struct DeviceState {
  std::atomic<uint64_t> used{0};  // bytes accounted against capacity
  uint64_t capacity = 0;
};

// The emulator's streams; defined in emu_stream.cpp.
struct Queue;

struct State {
  Config config;
  std::vector<std::unique_ptr<DeviceState>> devices;
  std::mutex streams_mutex;
  std::vector<Queue*> streams;  // live streams, for device synchronize
};

State& state();

// OUT_OF_RANGE with the visible count unless 0 <= device < count.
nhal_status check_device(int device);

// Concept tables, filled in by their files.
extern const nhal_memory_ops kMemoryOps;
extern const nhal_stream_ops kStreamOps;
extern const nhal_event_ops kEventOps;
extern const nhal_ipc_ops kIpcOps;

// Device synchronize: waits for every stream of the device (emu_stream.cpp).
nhal_status synchronize_device(int device);

}  // namespace nhal::emu

// The opaque handles of the HAL, as the emulator defines them.
struct nhal_stream_s {
  int device = 0;
  int priority = 0;
  nhal::emu::Queue* queue = nullptr;
};
