// An in-order queue of host functions: the emulator's stream.
//
// Inline mode runs each item on the submitting thread at submission, so the
// queue is always drained; thread mode hands items to one worker thread per
// stream. Both give in-order execution; `completed` counts items that ran.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace nhal::emu {

struct Queue {
  Queue(int device, bool threaded, bool blocking);
  ~Queue();  // drains, then joins the worker

  // Runs fn in order; returns the item's ticket (1, 2, ...).
  uint64_t submit(std::function<void()> fn);
  void wait_for(uint64_t ticket);  // until item `ticket` ran
  void drain() { wait_for(submitted()); }
  bool idle();
  uint64_t submitted();

  const int device;

 private:
  void worker_loop();

  const bool threaded_;
  const bool blocking_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> items_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace nhal::emu
