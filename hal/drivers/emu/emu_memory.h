// What the emulator's IPC table (emu_ipc.cpp) needs from its device memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "neuron_hal/status.h"

namespace nhal::emu {

// Large blocks start this far past the start of their mapping (see
// emu_memory.cpp). In a shareable block the gap holds the count of opens by
// peers, an int64 at the mapping's start, which every process maps.
constexpr size_t kPageSkew = 2048;

// A device allocation backed by a memfd: its start here, size and file.
struct Shareable {
  char* base = nullptr;
  size_t size = 0;
  int fd = -1;
};

// The shareable device allocation holding ptr; false if ptr is not inside one.
bool find_shareable(const void* ptr, Shareable* out);

// A peer's allocation mapped here (base .. base + size), as device memory of
// device (-1: a transport's view, not device memory here).
void add_imported(char* base, size_t size, int device);
// Forgets an imported mapping; false if base does not start one.
bool remove_imported(char* base, size_t* out_size);

}  // namespace nhal::emu
