// Device memory: host RAM owned by the emulator, accounted per logical core
// against its HBM capacity before any host memory is reserved. Large blocks
// are anonymous mappings (pages are touched lazily, so a 24 GiB capacity costs
// nothing until used; the kernel's overcommit check still refuses a block the
// host could never back, which becomes HOST_OUT_OF_MEMORY); small ones come
// from the C heap.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "../../loader/hal_error.h"
#include "emu_stream.h"
#include "emu_state.h"

namespace nhal::emu {
namespace {

constexpr size_t kMmapThreshold = 1 << 20;
constexpr size_t kAlignment = 64;

struct Block {
  size_t size;
  int device;  // -1 for pinned host blocks
};

std::mutex g_mu;
std::map<uintptr_t, Block> g_blocks;  // start address -> block

const Block* find_locked(const void* ptr, uintptr_t* out_start) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = g_blocks.upper_bound(p);
  if (it == g_blocks.begin()) return nullptr;
  --it;
  if (p >= it->first + std::max<size_t>(it->second.size, 1)) return nullptr;
  if (out_start) *out_start = it->first;
  return &it->second;
}

// Large blocks start 2 KiB past a page boundary. Host buffers (the CPU
// allocator's) sit a few cache lines past one, and glibc's memcpy from a
// page-aligned source into such a destination suffers 4K aliasing: device-to-host
// copies ran at a third of memcpy speed (benchmarks/copy_bandwidth.py).
constexpr size_t kPageSkew = 2048;

void* host_reserve(size_t size) {
  if (size >= kMmapThreshold) {
    void* p = mmap(nullptr, size + kPageSkew, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p) + kPageSkew;
  }
  void* p = nullptr;
  return posix_memalign(&p, kAlignment, size) == 0 ? p : nullptr;
}

void host_release(void* p, size_t size) {
  if (size >= kMmapThreshold) munmap(static_cast<char*>(p) - kPageSkew, size + kPageSkew);
  else std::free(p);
}

nhal_status dev_malloc(int device, size_t size, void** out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_ptr is null");
  nhal_status st = check_device(device);
  if (st != NHAL_STATUS_OK) return st;
  *out = nullptr;
  if (size == 0) return NHAL_STATUS_OK;
  DeviceState& d = *state().devices[device];
  uint64_t before = d.used.fetch_add(size);
  if (before + size > d.capacity) {
    d.used.fetch_sub(size);
    return fail(NHAL_STATUS_OUT_OF_MEMORY,
                "neuron:%d out of memory: tried to allocate %s; %s of %s in use, %s free",
                device, format_bytes(size).c_str(), format_bytes(before).c_str(),
                format_bytes(d.capacity).c_str(),
                format_bytes(d.capacity > before ? d.capacity - before : 0).c_str());
  }
  void* p = host_reserve(size);
  if (!p) {
    d.used.fetch_sub(size);
    return fail(NHAL_STATUS_HOST_OUT_OF_MEMORY,
                "neuron:%d out of memory: the host could not provide %s for emulated device "
                "memory (%s of %s in use on the device); free host memory or lower "
                "TORCH_NEURONX_EMU_HBM",
                device, format_bytes(size).c_str(), format_bytes(before).c_str(),
                format_bytes(d.capacity).c_str());
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_blocks[reinterpret_cast<uintptr_t>(p)] = Block{size, device};
  *out = p;
  return NHAL_STATUS_OK;
}

nhal_status release(void* ptr, bool pinned) {
  if (!ptr) return NHAL_STATUS_OK;
  Block b;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_blocks.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == g_blocks.end() || (it->second.device < 0) != pinned) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "%p is not the start of a live %s allocation", ptr,
                  pinned ? "pinned host" : "device");
    }
    b = it->second;
    g_blocks.erase(it);
  }
  host_release(ptr, b.size);
  if (!pinned) state().devices[b.device]->used.fetch_sub(b.size);
  return NHAL_STATUS_OK;
}

nhal_status dev_free(void* ptr) { return release(ptr, false); }

nhal_status device_of(const void* ptr, int* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_device is null");
  std::lock_guard<std::mutex> lock(g_mu);
  const Block* b = find_locked(ptr, nullptr);
  if (!b || b->device < 0) return fail(NHAL_STATUS_INVALID_ARGUMENT, "%p is not device memory", ptr);
  *out = b->device;
  return NHAL_STATUS_OK;
}

nhal_status copy(nhal_stream s, void* dst, const void* src, size_t n, nhal_copy_kind kind) {
  if (!s || !s->queue) return fail(NHAL_STATUS_INVALID_ARGUMENT, "stream handle is null");
  if (kind < NHAL_COPY_HOST_TO_DEVICE || kind > NHAL_COPY_DEVICE_TO_DEVICE) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT, "unknown copy kind %d", static_cast<int>(kind));
  }
  if (n == 0) return NHAL_STATUS_OK;
  if (!dst || !src) return fail(NHAL_STATUS_INVALID_ARGUMENT, "null pointer in a %zu-byte copy", n);
  s->queue->submit([dst, src, n] { std::memcpy(dst, src, n); });
  return NHAL_STATUS_OK;
}

nhal_status host_alloc(size_t size, void** out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_ptr is null");
  *out = nullptr;
  if (size == 0) return NHAL_STATUS_OK;
  void* p = host_reserve(size);
  if (!p) {
    return fail(NHAL_STATUS_HOST_OUT_OF_MEMORY, "the host could not provide %s of pinned memory",
                format_bytes(size).c_str());
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_blocks[reinterpret_cast<uintptr_t>(p)] = Block{size, -1};
  *out = p;
  return NHAL_STATUS_OK;
}

nhal_status host_free(void* ptr) { return release(ptr, true); }

int host_is_pinned(const void* ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  const Block* b = find_locked(ptr, nullptr);
  return b && b->device < 0 ? 1 : 0;
}

}  // namespace

const nhal_memory_ops kMemoryOps = {dev_malloc, dev_free, device_of, copy,
                                    host_alloc, host_free, host_is_pinned};

}  // namespace nhal::emu
