// The Work of a neuron process-group call: completed (or failed) once by the
// thread that ran it, with a Future over its output tensors for get_future().
// A thread that waits for a queued call may run it itself (set_helper), and
// releases the finished calls' tensors once it is complete (set_releaser).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <vector>

namespace torch_neuronx::dist {

class NeuronWork final : public c10d::Work {
 public:
  NeuronWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
      : Work(rank, type), outputs_(std::move(outputs)) {
    std::vector<c10::Device> devices;
    for (const at::Tensor& t : outputs_) {
      if (t.is_privateuseone() && std::find(devices.begin(), devices.end(), t.device()) == devices.end()) {
        devices.push_back(t.device());
      }
    }
    future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()), devices);
  }

  void complete(std::exception_ptr error) {
    completing_.store(true, std::memory_order_release);  // before any waiter can wake (future or work)
    if (error)
      future_->setError(error);
    else
      future_->markCompleted(c10::IValue(outputs_));
    finish(error);
  }

  // Set by the process group for a queued call: wait() calls it first, and it
  // runs the queued calls up to this one on the waiting thread while the
  // worker has not started them (ProcessGroupNeuron::help_until).
  void set_helper(std::function<void(NeuronWork&)> helper) { helper_ = std::move(helper); }
  // Set by the process group for a queued call: wait() calls it once the
  // call is complete, on the waiting thread, to destroy the finished calls'
  // captured tensors there (ProcessGroupNeuron::release_finished), so that
  // memory the caller then frees is free at once.
  void set_releaser(std::function<void(NeuronWork&)> releaser) { releaser_ = std::move(releaser); }
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override {
    if (helper_ && !isCompleted()) helper_(*this);
    const bool done = Work::wait(timeout);
    if (releaser_) releaser_(*this);
    return done;
  }

  // The thread that ran the call has handed its captured state over to be
  // destroyed on a calling thread (or destroyed it there itself).
  void retire() { retired_.store(true, std::memory_order_release); }
  bool retired() const { return retired_.load(std::memory_order_acquire); }
  // complete() has begun: a thread waiting for the Work or its Future may wake any moment.
  bool completing() const { return completing_.load(std::memory_order_acquire); }

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::function<void(NeuronWork&)> helper_;
  std::function<void(NeuronWork&)> releaser_;
  std::atomic<bool> retired_{false};
  std::atomic<bool> completing_{false};
};

}  // namespace torch_neuronx::dist
