// IPC: a peer maps a device block's memfd (emu_memory.cpp) into its own
// address space; both processes then address the same pages. A handle names
// the memfd by the exporter's pid and descriptor, and the file's inode: the
// importer opens /proc/<pid>/fd/<fd> and checks the inode, so the handle is
// plain bytes (no descriptor passing) and a reused descriptor number is never
// mistaken for the file it named. The count of opens lives in the block's
// leading gap (kPageSkew bytes before its start), which every mapping
// includes, so exporter and importers update one counter.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "../../loader/hal_error.h"
#include "emu_memory.h"
#include "emu_state.h"

namespace nhal::emu {
namespace {

int64_t* open_counter(char* base) { return reinterpret_cast<int64_t*>(base - kPageSkew); }

// The emulator's part of a handle.
struct Opaque {
  uint32_t magic;  // kMagic: exported by this driver
  int32_t pid;     // the exporter
  int32_t fd;      // its descriptor of the block's memfd
  uint32_t pad;
  uint64_t inode;  // of that memfd
};
static_assert(sizeof(Opaque) <= NHAL_IPC_HANDLE_BYTES);
constexpr uint32_t kMagic = 0x6e65756d;  // "neum"

nhal_status export_handle(const void* ptr, int count_open, nhal_ipc_handle* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out handle is null");
  Shareable s;
  if (!find_shareable(ptr, &s)) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT,
                "%p is not inside shareable device memory (a block of 1 MiB or more from "
                "memory.malloc)",
                ptr);
  }
  struct stat st{};
  if (fstat(s.fd, &st) != 0) return fail(NHAL_STATUS_INTERNAL, "the memfd of %p is not open", ptr);
  if (count_open) __atomic_fetch_add(open_counter(s.base), 1, __ATOMIC_ACQ_REL);
  nhal_ipc_handle h{};
  h.size = s.size;
  h.offset = static_cast<uint64_t>(static_cast<const char*>(ptr) - s.base);
  const Opaque o{kMagic, static_cast<int32_t>(getpid()), s.fd, 0, static_cast<uint64_t>(st.st_ino)};
  std::memcpy(h.opaque, &o, sizeof(o));
  *out = h;
  return NHAL_STATUS_OK;
}

nhal_status open_handle(int device, const nhal_ipc_handle* h, void** out_base) {
  if (!h || !out_base) return fail(NHAL_STATUS_INVALID_ARGUMENT, "null handle or output");
  Opaque o;
  std::memcpy(&o, h->opaque, sizeof(o));
  if (o.magic != kMagic) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT, "IPC handle was not exported by the emulator driver");
  }
  nhal_status status = device < 0 ? NHAL_STATUS_OK : check_device(device);
  if (status != NHAL_STATUS_OK) return status;
  const std::string path = "/proc/" + std::to_string(o.pid) + "/fd/" + std::to_string(o.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != o.inode) {
    status = fail(NHAL_STATUS_INVALID_ARGUMENT,
                  "the device memory of IPC handle (process %d) is gone: the exporting process exited or "
                  "freed it before this one opened it (keep the tensor alive in the sender until receivers "
                  "have it)",
                  static_cast<int>(o.pid));
  }
  const uint64_t mapped = h->size + kPageSkew;
  if (status == NHAL_STATUS_OK && (static_cast<uint64_t>(st.st_size) != mapped || h->offset > h->size)) {
    status = fail(NHAL_STATUS_INVALID_ARGUMENT,
                  "IPC handle does not match its memory: %llu bytes at offset %llu, file of %lld "
                  "bytes (was it exported by this build's emulator?)",
                  static_cast<unsigned long long>(h->size), static_cast<unsigned long long>(h->offset),
                  static_cast<long long>(st.st_size));
  }
  void* p = MAP_FAILED;
  if (status == NHAL_STATUS_OK) {
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      status = fail(NHAL_STATUS_HOST_OUT_OF_MEMORY, "could not map a peer's %s of device memory",
                    format_bytes(h->size).c_str());
    }
  }
  if (fd >= 0) close(fd);
  if (status != NHAL_STATUS_OK) return status;
  madvise(p, mapped, MADV_DONTFORK);
  char* base = static_cast<char*>(p) + kPageSkew;
  add_imported(base, h->size, device < 0 ? -1 : device);
  *out_base = base;
  return NHAL_STATUS_OK;
}

nhal_status close_handle(void* base, int end_open) {
  size_t size = 0;
  if (!remove_imported(static_cast<char*>(base), &size)) {
    return fail(NHAL_STATUS_INVALID_ARGUMENT, "%p is not a base returned by ipc.open_handle", base);
  }
  if (end_open) __atomic_fetch_sub(open_counter(static_cast<char*>(base)), 1, __ATOMIC_ACQ_REL);
  munmap(static_cast<char*>(base) - kPageSkew, size + kPageSkew);
  return NHAL_STATUS_OK;
}

nhal_status open_count(const void* ptr, int64_t* out) {
  if (!out) return fail(NHAL_STATUS_INVALID_ARGUMENT, "out_count is null");
  Shareable s;
  *out = find_shareable(ptr, &s) ? __atomic_load_n(open_counter(s.base), __ATOMIC_ACQUIRE) : 0;
  return NHAL_STATUS_OK;
}

}  // namespace

const nhal_ipc_ops kIpcOps = {export_handle, open_handle, close_handle, open_count};

}  // namespace nhal::emu
