// Point-to-point messages between the ranks of one host (send / recv /
// batch_isend_irecv), through the ShmGroup's byte ring for each ordered pair of
// ranks. A progress thread owns the rings: for every peer it keeps a FIFO of
// posted sends and a FIFO of posted receives and moves whatever the ring
// allows for each FIFO's head, without ever blocking on one of them, so any
// order of isend / irecv on the two sides completes (messages larger than the
// ring stream through it).
//
// Framing: a 64-byte record {magic, bytes, dtype, tag}, then the payload
// padded to 64 bytes. Messages on a pair match in posting order; a receive
// whose size, dtype or tag differs from the matching send fails naming both
// (the payload is drained, so the pair stays usable). A send completes once
// it is fully in the ring; a receive once it is fully copied out. A peer whose
// process exits, or an op that makes no progress for the group's timeout,
// fails with an error naming the peer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/onehost/ShmGroup.h"

namespace torch_neuronx::dist {

class ShmPointToPoint {
 public:
  // Called on the progress thread with nullptr or the failure. The callback
  // itself is destroyed later, on a thread that calls post_* or
  // take_finished (it may own Python objects).
  using Done = std::function<void(std::exception_ptr)>;

  ShmPointToPoint(ShmGroup& group, std::string group_name, std::chrono::milliseconds timeout);
  // Fails every pending op ("process group destroyed") and stops the thread.
  ~ShmPointToPoint();
  ShmPointToPoint(const ShmPointToPoint&) = delete;
  ShmPointToPoint& operator=(const ShmPointToPoint&) = delete;

  void post_send(int dst, const void* data, size_t bytes, int32_t dtype, int64_t tag, Done done);
  void post_recv(int src, void* data, size_t bytes, int32_t dtype, int64_t tag, Done done);
  // Moves the callbacks of finished ops into `out`, for the caller to destroy
  // on its thread; first waits (at most a second) for an op the progress
  // thread has completed but not handed over yet.
  void take_finished(std::vector<Done>& out);

 private:
  struct Op;
  struct Peer;

  void post(std::unique_ptr<Op> op);
  void progress_loop();
  // Moves what the ring allows; true if any byte moved.
  bool progress_send(Op& op);
  bool progress_recv(Op& op);
  // The oldest pending send (or recv) to / from `peer`, or null.
  Op* front(Peer& peer, bool send);
  void fail_stalled(std::chrono::steady_clock::time_point now);
  void finish(Peer& peer, bool send, std::exception_ptr error);
  std::string describe(const Op& op) const;

  ShmGroup& group_;
  std::string group_name_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::vector<Peer> peers_;
  std::vector<Done> finished_;  // destroyed on posting threads
  bool finishing_ = false;      // the progress thread is between an op's done() and handing it over
  std::condition_variable finished_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace torch_neuronx::dist
