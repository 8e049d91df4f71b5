// The Work of a neuron process-group call: completed (or failed) once by the
// thread that ran it, with a Future over its output tensors for get_future().
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
#include <exception>
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

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};


}  // namespace torch_neuronx::dist
