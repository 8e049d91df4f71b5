// One process group's shared-memory segment on this host: a control block
// (per-rank phase counters, pids and call signatures, two futex words), one
// data slot per rank for the collectives, and one byte ring per ordered pair
// of ranks for point-to-point messages (ShmPointToPoint). Ranks meet at numbered phases: arrive() publishes this
// rank's phase, wait_all() blocks (spin briefly, then futex) until every rank
// reached it, and throws DistError naming the missing ranks when the timeout
// passes or a missing rank's process has exited.
//
// The segment is created by rank 0 with mode 0600 under a unique name and
// unlinked as soon as every rank has mapped it, so nothing stays in /dev/shm
// after the job, however it ends. A job killed while its ranks were still
// attaching leaves its segment behind; the next group created on the host
// removes segments whose creating process is gone (remove_orphans).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "distributed/collectives/CallSignature.h"
#include "distributed/collectives/DistError.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

// A single-producer single-consumer byte ring from one rank to another:
// `head` counts bytes ever written (by the sender), `tail` bytes ever
// consumed (by the receiver).
struct alignas(64) ShmChannel {
  std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<uint64_t> tail{0};
};

class TORCH_NEURONX_API ShmGroup {
 public:
  // Rank 0 creates the segment `name`; the others open it.
  ShmGroup(const std::string& name, int rank, int world, size_t slot_bytes, size_t ring_bytes, bool create);
  ~ShmGroup();
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  // A name no other job uses (pid, time and random bits).
  static std::string unique_name(const std::string& tag);
  static void unlink(const std::string& name);
  // Unlinks this project's segments (tag `tag`) whose creator has exited.
  static void remove_orphans(const std::string& tag);

  int rank() const { return rank_; }
  int world() const { return world_; }
  size_t slot_bytes() const { return slot_bytes_; }
  char* slot(int r) const;

  size_t ring_bytes() const { return ring_bytes_; }
  ShmChannel& channel(int src, int dst) const;
  char* ring(int src, int dst) const;

  // The futex word ring traffic bumps (point-to-point only: arrivals bump
  // their own word, so a collective never wakes a progress thread): read it,
  // check your condition, then wait_for_ring_change(seen) sleeps until it
  // moves (or `slice`).
  uint32_t ring_wake_value() const;
  void notify_rings();
  void wait_for_ring_change(uint32_t seen, std::chrono::milliseconds slice);
  // Rank r's process has exited (gone, or a zombie).
  bool rank_exited(int r) const;

  // Signatures are double-buffered by call parity: a rank that finished call
  // k may publish call k+1's signature (in the other buffer) while a slower
  // rank still reads call k's. It cannot publish call k+2 before every rank
  // has arrived at call k+1's check, that is, finished reading call k's.
  void publish_signature(uint64_t call, const CallSignature& sig);
  CallSignature signature(uint64_t call, int r) const;

  void arrive(uint64_t phase);
  // `what` names the collective and group in the error.
  void wait_all(uint64_t phase, const std::string& what, std::chrono::milliseconds timeout);

 private:
  // A futex word and the count of ranks asleep on it.
  struct WakeWord {
    std::atomic<uint32_t> word{0};
    std::atomic<uint32_t> sleepers{0};
    void notify();
    void wait_for_change(uint32_t seen, std::chrono::milliseconds slice);
  };
  struct Header;
  Header* header_ = nullptr;
  char* data_ = nullptr;
  size_t mapped_bytes_ = 0;
  int rank_;
  int world_;
  size_t slot_bytes_;
  size_t ring_bytes_;
};

}  // namespace torch_neuronx::dist
