// The Work of a neuron process-group call: completed (or failed) once by the
// thread that ran it, with a Future over its output tensors for get_future().
// A thread that waits for a queued call may run it itself (set_helper).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
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
    if (error) future_->setError(error);
    else future_->markCompleted(c10::IValue(outputs_));
    finish(error);
  }

  // Set by the process group for a queued call: wait() calls it first, and it
  // runs the queued calls up to this one on the waiting thread while the
  // worker has not started them (ProcessGroupNeuron::help_until).
  void set_helper(std::function<void(NeuronWork&)> helper) { helper_ = std::move(helper); }
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override {
    if (helper_ && !isCompleted()) helper_(*this);
    return Work::wait(timeout);
  }

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::function<void(NeuronWork&)> helper_;
};


}  // namespace torch_neuronx::dist
