#include "distributed/onehost/ShmGroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace torch_neuronx::dist {
namespace {

constexpr uint64_t kMagic = 0x4e45555253484d31ull;  // "NEURSHM1"
constexpr size_t kPage = 4096;

struct alignas(64) RankControl {
  std::atomic<uint64_t> phase{0};
  std::atomic<int32_t> pid{0};
  CallSignature signature[2];  // by call parity (ShmGroup::publish_signature)
};

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::milliseconds slice) {
  timespec ts{static_cast<time_t>(slice.count() / 1000), static_cast<long>(slice.count() % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Gone, or a zombie its parent has not reaped yet.
bool process_exited(int32_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

}  // namespace

// Followed in the segment by world RankControls, then world x world
// ShmChannels (src-major), then the slots, then the rings.
struct ShmGroup::Header {
  uint64_t magic;
  int32_t world;
  uint64_t slot_bytes;
  alignas(64) WakeWord phases;  // bumped by every arrival (collectives)
  alignas(64) WakeWord rings;   // bumped by ring traffic (point-to-point)

  RankControl* ranks() {
    return reinterpret_cast<RankControl*>(reinterpret_cast<char*>(this) + round_up(sizeof(Header), 64));
  }
  ShmChannel* channels() { return reinterpret_cast<ShmChannel*>(ranks() + world); }
  static size_t bytes(int world) {
    return round_up(round_up(sizeof(Header), 64) + world * sizeof(RankControl) + world * world * sizeof(ShmChannel),
                    kPage);
  }
};

std::string ShmGroup::unique_name(const std::string& tag) {
  std::random_device rd;
  std::ostringstream s;
  s << "/torch_neuronx_" << tag << "_" << getpid() << "_" << std::hex
    << std::chrono::steady_clock::now().time_since_epoch().count() << "_" << rd();
  return s.str();
}

void ShmGroup::unlink(const std::string& name) { shm_unlink(name.c_str()); }

void ShmGroup::remove_orphans(const std::string& tag) {
  const std::string prefix = "torch_neuronx_" + tag + "_";
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    const std::string entry = e->d_name;
    if (entry.rfind(prefix, 0) != 0) continue;
    const int32_t pid = std::atoi(entry.c_str() + prefix.size());  // unique_name puts the creator's pid first
    if (pid > 0 && pid != getpid() && process_exited(pid)) shm_unlink(("/" + entry).c_str());
  }
  closedir(dir);
}

ShmGroup::ShmGroup(const std::string& name, int rank, int world, size_t slot_bytes, size_t ring_bytes, bool create)
    : rank_(rank), world_(world), slot_bytes_(round_up(slot_bytes, kPage)), ring_bytes_(round_up(ring_bytes, kPage)) {
  const size_t header_bytes = Header::bytes(world);
  mapped_bytes_ = header_bytes + slot_bytes_ * world + ring_bytes_ * world * (world - 1);
  int fd = create ? shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600) : shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0)
    throw DistError("neuron process group: cannot " + std::string(create ? "create" : "open") + " shared memory " +
                    name + ": " + std::strerror(errno));
  if (create && ftruncate(fd, static_cast<off_t>(mapped_bytes_)) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    throw DistError("neuron process group: cannot size shared memory " + name + " to " + std::to_string(mapped_bytes_) +
                    " bytes: " + std::strerror(err));
  }
  struct stat st{};
  if (!create && (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != mapped_bytes_)) {
    close(fd);
    throw DistError("neuron process group: shared memory " + name + " has " + std::to_string(st.st_size) +
                    " bytes, not the " + std::to_string(mapped_bytes_) + " a group of " + std::to_string(world) +
                    " ranks needs: it belongs to another group (are two groups publishing under one store key?)");
  }
  void* p = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    throw DistError("neuron process group: cannot map shared memory " + name + ": " + std::strerror(errno));
  header_ = static_cast<Header*>(p);
  data_ = static_cast<char*>(p) + header_bytes;
  header_->world = world;  // rank 0 writes the same value; the accessors need it before the magic is checked
  if (create) {
    header_->slot_bytes = slot_bytes_;
    std::atomic_thread_fence(std::memory_order_release);
    header_->magic = kMagic;
  }
  header_->ranks()[rank].pid.store(getpid());
}

ShmGroup::~ShmGroup() {
  if (header_) munmap(header_, mapped_bytes_);
}

char* ShmGroup::slot(int r) const { return data_ + static_cast<size_t>(r) * slot_bytes_; }

ShmChannel& ShmGroup::channel(int src, int dst) const { return header_->channels()[src * world_ + dst]; }

// Rings exist for src != dst only: world - 1 per sender.
char* ShmGroup::ring(int src, int dst) const {
  const size_t index = static_cast<size_t>(src) * (world_ - 1) + (dst < src ? dst : dst - 1);
  return data_ + slot_bytes_ * world_ + index * ring_bytes_;
}

uint32_t ShmGroup::ring_wake_value() const { return header_->rings.word.load(std::memory_order_acquire); }

// A sleeper counts itself before futex_wait checks the word; a notifier bumps
// the word before it reads the count (both sequentially consistent). So either
// the notifier sees the sleeper and wakes it, or the sleeper's futex_wait sees
// the new word and returns at once: no wake-up is lost, and a rank whose
// peers are all spinning pays no syscall.
void ShmGroup::WakeWord::notify() {
  word.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) > 0) futex_wake_all(&word);
}

void ShmGroup::WakeWord::wait_for_change(uint32_t seen, std::chrono::milliseconds slice) {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  futex_wait(&word, seen, slice);
  sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void ShmGroup::notify_rings() { header_->rings.notify(); }

void ShmGroup::wait_for_ring_change(uint32_t seen, std::chrono::milliseconds slice) {
  header_->rings.wait_for_change(seen, slice);
}

bool ShmGroup::rank_exited(int r) const { return process_exited(header_->ranks()[r].pid.load()); }

void ShmGroup::publish_signature(uint64_t call, const CallSignature& sig) {
  header_->ranks()[rank_].signature[call % 2] = sig;
}

CallSignature ShmGroup::signature(uint64_t call, int r) const { return header_->ranks()[r].signature[call % 2]; }

void ShmGroup::arrive(uint64_t phase) {
  header_->ranks()[rank_].phase.store(phase, std::memory_order_release);
  header_->phases.notify();
}

void ShmGroup::wait_all(uint64_t phase, const std::string& what, std::chrono::milliseconds timeout) {
  auto missing = [&] {
    for (int r = 0; r < world_; ++r) {
      if (header_->ranks()[r].phase.load(std::memory_order_acquire) < phase) return r;
    }
    return -1;
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int spin = 0; spin < 256; ++spin) {
    if (missing() < 0) return;
    std::this_thread::yield();
  }
  while (true) {
    const uint32_t seen = header_->phases.word.load(std::memory_order_acquire);
    if (missing() < 0) return;
    std::ostringstream late, dead;
    for (int r = 0; r < world_; ++r) {
      if (header_->ranks()[r].phase.load(std::memory_order_acquire) >= phase) continue;
      late << (late.tellp() > 0 ? ", " : "") << r;
      if (process_exited(header_->ranks()[r].pid.load())) dead << (dead.tellp() > 0 ? ", " : "") << r;
    }
    if (dead.tellp() > 0) {
      throw DistError(what + ": rank " + dead.str() + " of the group exited (its process is gone); waiting for rank " +
                      late.str());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw DistError(what + ": timed out after " + std::to_string(timeout.count()) + " ms waiting for rank " +
                      late.str() + " of the group");
    }
    header_->phases.wait_for_change(seen, std::chrono::milliseconds(50));
  }
}

}  // namespace torch_neuronx::dist
