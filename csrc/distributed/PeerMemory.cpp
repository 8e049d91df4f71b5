#include "distributed/PeerMemory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "runtime/NeuronHal.h"

namespace torch_neuronx::dist {

PeerBuffer describe_buffer(const void* ptr, size_t bytes) {
  PeerBuffer b;
  nhal_ipc_handle h{};
  if (!ptr || !hal().ipc.export_handle || hal().ipc.export_handle(ptr, /*count_open=*/0, &h) != NHAL_STATUS_OK) {
    return b;
  }
  struct stat st {};
  if (h.offset + bytes > h.size || fstat(h.fd, &st) != 0) return b;
  b.pid = static_cast<int32_t>(getpid());
  b.fd = h.fd;
  b.inode = st.st_ino;
  b.size = h.size;
  b.offset = h.offset;
  return b;
}

PeerMappings::~PeerMappings() {
  for (const Entry& e : entries_) hal().ipc.close_handle(e.base, /*end_open=*/0);
}

const char* PeerMappings::map(const PeerBuffer& b) {
  ++uses_;
  for (Entry& e : entries_) {
    if (e.pid == b.pid && e.inode == b.inode) {
      e.last_use = uses_;
      return e.base + b.offset;
    }
  }
  const std::string path = "/proc/" + std::to_string(b.pid) + "/fd/" + std::to_string(b.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_ino != b.inode) {
    close(fd);
    return nullptr;
  }
  if (entries_.size() >= kMaxMappings) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& x, const Entry& y) { return x.last_use < y.last_use; });
    hal().ipc.close_handle(oldest->base, /*end_open=*/0);
    entries_.erase(oldest);
  }
  const nhal_ipc_handle h{fd, b.size, b.offset};
  void* base = nullptr;
  if (hal().ipc.open_handle(/*device=*/-1, &h, &base) != NHAL_STATUS_OK) return nullptr;  // it closed fd
  entries_.push_back({b.pid, b.inode, static_cast<char*>(base), uses_});
  count_.store(entries_.size(), std::memory_order_relaxed);
  return static_cast<char*>(base) + b.offset;
}

}  // namespace torch_neuronx::dist
