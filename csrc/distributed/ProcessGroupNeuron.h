// The `neuron` process-group backend: a c10d::Backend whose collectives run on
// a worker thread, in submission order, through shared memory between the
// ranks of this host (ShmCollectives). Tensors are neuron tensors (or CPU
// ones): the emulator's device memory is host-addressable, so the data moves
// with no staging copy. A collective starts after the caller's current neuron
// stream reached the call (inputs are ready) and its Work completes when the
// outputs are written.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "distributed/ShmCollectives.h"
#include "runtime/NeuronMacros.h"

namespace torch_neuronx {

class TORCH_NEURONX_API ProcessGroupNeuron : public c10d::Backend {
 public:
  ProcessGroupNeuron(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout, std::string group_name);
  ~ProcessGroupNeuron() override;

  const std::string getBackendName() const override { return "neuron"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // Bytes this rank moved through each transport (decision 8).
  uint64_t shm_bytes() const { return shm_bytes_.load(); }

 private:
  using Task = std::function<void()>;
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs, Task task,
                                         uint64_t bytes);
  void worker_loop();

  std::unique_ptr<dist::ShmCollectives> shm_;
  std::string group_name_;
  std::mutex mu_;
  std::condition_variable cv_;
  // Finished items wait here to be destroyed on a calling thread: their
  // tensors may own Python objects, which the worker must never release.
  std::deque<std::function<void()>> queue_;
  std::vector<std::function<void()>> finished_;
  bool stop_ = false;
  std::atomic<uint64_t> shm_bytes_{0};
  std::thread worker_;
};

}  // namespace torch_neuronx
