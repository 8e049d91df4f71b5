// Device memory: host RAM owned by the emulator, accounted per logical core
// against its HBM capacity before any host memory is reserved. Large blocks
// are shared mappings of a memfd each, so other processes can map them (IPC,
// emu_ipc.cpp); pages are touched lazily, so a 24 GiB capacity costs nothing
// until used. A block larger than the host's RAM and swap together is
// refused as HOST_OUT_OF_MEMORY (the kernel's overcommit rule for anonymous
// memory, which memfd pages escape). Device mappings are not inherited by
// fork: a forked child cannot use the device. Small blocks and pinned host
// memory are private.
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "../../loader/hal_error.h"
#include "emu_memory.h"
#include "emu_state.h"
#include "emu_stream.h"

namespace nhal::emu {
namespace {

constexpr size_t kMmapThreshold = 1 << 20;
constexpr size_t kAlignment = 64;

struct Block {
  size_t size;
  int device;             // -1 for pinned host blocks
  int fd = -1;            // the memfd of a shareable device block
  bool imported = false;  // a peer's block mapped by emu_ipc.cpp
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

// Large blocks start kPageSkew (2 KiB) past a page boundary. Host buffers (the
// CPU allocator's) sit a few cache lines past one, and glibc's memcpy from a
// page-aligned source into such a destination suffers 4K aliasing: device-to-host
// copies ran at a third of memcpy speed (benchmarks/copy_bandwidth.py).

void* host_reserve(size_t size) {
  if (size >= kMmapThreshold) {
    void* p = mmap(nullptr, size + kPageSkew, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p) + kPageSkew;
  }
  void* p = nullptr;
  return posix_memalign(&p, kAlignment, size) == 0 ? p : nullptr;
}

bool host_could_back(size_t size) {
  struct sysinfo info{};
  if (sysinfo(&info) != 0) return true;
  const unsigned __int128 host = (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * info.mem_unit;
  return size <= host;
}

// A large device block in a memfd of its own (*out_fd), else (no memfd: file
// descriptors exhausted, say) a private block that cannot be shared (-1).
void* device_reserve(size_t size, int* out_fd) {
  *out_fd = -1;
  if (size < kMmapThreshold) return host_reserve(size);
  if (!host_could_back(size)) return nullptr;
  int fd = memfd_create("neuron-device-memory", MFD_CLOEXEC);
  if (fd < 0) return host_reserve(size);
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size + kPageSkew)) == 0) {
    p = mmap(nullptr, size + kPageSkew, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  madvise(p, size + kPageSkew, MADV_DONTFORK);
  *out_fd = fd;
  return static_cast<char*>(p) + kPageSkew;
}

void host_release(void* p, size_t size, int fd) {
  if (size >= kMmapThreshold)
    munmap(static_cast<char*>(p) - kPageSkew, size + kPageSkew);
  else
    std::free(p);
  if (fd >= 0) close(fd);
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
                "neuron:%d out of memory: tried to allocate %s; %s of %s in use, %s free "
                "(TORCH_NEURONX_EMU_HBM sets the emulator's memory per core)",
                device, format_bytes(size).c_str(), format_bytes(before).c_str(), format_bytes(d.capacity).c_str(),
                format_bytes(d.capacity > before ? d.capacity - before : 0).c_str());
  }
  int fd = -1;
  void* p = device_reserve(size, &fd);
  if (!p) {
    d.used.fetch_sub(size);
    return fail(NHAL_STATUS_HOST_OUT_OF_MEMORY,
                "neuron:%d out of memory: the host could not provide %s for emulated device "
                "memory (%s of %s in use on the device); free host memory or lower "
                "TORCH_NEURONX_EMU_HBM",
                device, format_bytes(size).c_str(), format_bytes(before).c_str(), format_bytes(d.capacity).c_str());
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_blocks[reinterpret_cast<uintptr_t>(p)] = Block{size, device, fd};
  *out = p;
  return NHAL_STATUS_OK;
}

nhal_status release(void* ptr, bool pinned) {
  if (!ptr) return NHAL_STATUS_OK;
  Block b;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_blocks.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == g_blocks.end() || (it->second.device < 0) != pinned || it->second.imported) {
      return fail(NHAL_STATUS_INVALID_ARGUMENT, "%p is not the start of a live %s allocation", ptr,
                  pinned ? "pinned host" : "device");
    }
    b = it->second;
    g_blocks.erase(it);
  }
  host_release(ptr, b.size, b.fd);
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
  return b && b->device < 0 && !b->imported ? 1 : 0;
}

}  // namespace

bool find_shareable(const void* ptr, Shareable* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  uintptr_t start = 0;
  const Block* b = find_locked(ptr, &start);
  if (!b || b->fd < 0) return false;
  *out = Shareable{reinterpret_cast<char*>(start), b->size, b->fd};
  return true;
}

void add_imported(char* base, size_t size, int device) {
  std::lock_guard<std::mutex> lock(g_mu);
  Block b{size, device};
  b.imported = true;
  g_blocks[reinterpret_cast<uintptr_t>(base)] = b;
}

bool remove_imported(char* base, size_t* out_size) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_blocks.find(reinterpret_cast<uintptr_t>(base));
  if (it == g_blocks.end() || !it->second.imported) return false;
  *out_size = it->second.size;
  g_blocks.erase(it);
  return true;
}

const nhal_memory_ops kMemoryOps = {dev_malloc, dev_free, device_of, copy, host_alloc, host_free, host_is_pinned};

}  // namespace nhal::emu
