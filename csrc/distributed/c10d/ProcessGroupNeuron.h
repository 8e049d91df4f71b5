// The `neuron` process-group backend: a c10d::Backend whose collectives run on
// a worker thread, in submission order, through shared memory between the
// ranks of this host (ShmCollectives) and Gloo between hosts
// (MultiHostCollectives). Each c10d call checks its tensors, then queues one
// entry of the collective table (Collectives.h) on host bytes of its tensors
// (HostBuffers: the device bytes themselves on a host-addressable device, no
// copy). A collective starts after the caller's current neuron stream reached
// the call (inputs are ready) and its Work completes when the outputs are
// written.
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

#include "distributed/c10d/HostBuffers.h"
#include "distributed/collectives/Collectives.h"
#include "distributed/multihost/MultiHostCollectives.h"
#include "distributed/onehost/ShmCollectives.h"
#include "distributed/onehost/ShmPointToPoint.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx {
namespace dist {
class NeuronWork;
}

// The backend's options (what split_group copies from a parent group).
struct TORCH_NEURONX_API NeuronBackendOptions : c10d::Backend::Options {
  explicit NeuronBackendOptions(std::chrono::milliseconds timeout) : Options("neuron", timeout) {}
};

// Where a group's ranks live when they span hosts (empty: all on this host).
struct HostSpan {
  std::vector<int> host_of_rank;              // host index of each group rank
  c10::intrusive_ptr<c10d::Backend> world;    // Gloo over every rank of the group
  c10::intrusive_ptr<c10d::Backend> leaders;  // Gloo over each host's first rank; set on those only
};

class TORCH_NEURONX_API ProcessGroupNeuron : public c10d::Backend {
 public:
  ProcessGroupNeuron(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout, std::string group_name, HostSpan span = {});
  ~ProcessGroupNeuron() override;

  const std::string getBackendName() const override { return "neuron"; }

  // Waits, at most `limit`, until every live group's worker is idle. Called at
  // interpreter exit with the GIL released: a worker completing a Work runs and
  // then destroys the Future's callbacks, which may hold Python functions
  // (Future.then in DDP's comm hooks); releasing those needs the GIL, and a
  // thread that takes the GIL while Python finalizes is terminated (abort).
  static void drain_all(std::chrono::milliseconds limit);
  // Destroys, on the calling thread, what every live group's finished calls
  // still hold (their tensors and callbacks wait for a calling thread, see
  // finished_): torch.neuron.synchronize() calls it, so that device memory a
  // program has freed is free once it synchronized.
  static void release_all_finished();

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
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits, std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& output_lists,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;

  // A new group of the given ranks of this one (sorted; this rank's position
  // is its rank there); null if this rank is not among them. Every rank of
  // this group calls it, in the same order. It rendezvouses through this
  // group's own store, not `store`: torch names split groups after the count
  // of groups each rank knows, which differs across ranks after a new_group
  // that left some of them out.
  bool supportsSplitting() const override { return true; }
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;
  c10::intrusive_ptr<Options> getBackendOptions() override;

  // Calls issued on this group so far (the same count on every rank).
  void setSequenceNumberForGroup() override { sequence_ = 0; }
  uint64_t getSequenceNumberForGroup() override { return sequence_.load(); }

  // Runs the table entry `name` (Collectives.h: register_collective) with one
  // input and one output tensor: in, out, their dtype and numel, and root.
  c10::intrusive_ptr<c10d::Work> run_named(const std::string& name, std::vector<at::Tensor>& inputs,
                                           std::vector<at::Tensor>& outputs, int root);

  // Between the two, calls are recorded; endCoalescing's Work completes when
  // all of them did (and fails with the first failure among them).
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  // Bytes this rank moved through each transport (read by torch_neuronx._distributed.tcp_bytes / shm_bytes).
  uint64_t shm_bytes() const { return multi_ ? multi_->shm_bytes() : shm_bytes_.load(); }
  uint64_t tcp_bytes() const { return multi_ ? multi_->tcp_bytes() : 0; }
  // Hosts this group's ranks are on.
  int host_count() const { return host_count_; }
  // Peers' allocations this rank has mapped for collectives that read them in place.
  size_t peer_mappings() const { return shm_ ? shm_->peer_mappings().size() : 0; }

 private:
  using Task = std::function<void()>;
  // Sets a call's host buffers, on the worker (i: the call's index).
  using Fill = std::function<void(dist::HostBuffers&, dist::HostCall&)>;
  using FillEach = std::function<void(dist::HostBuffers&, dist::HostCall&, size_t i)>;
  // Checks each call (def.check), then queues one item that fills and runs
  // them in order (the coalesced forms) and writes the outputs back.
  c10::intrusive_ptr<c10d::Work> collectives(c10d::OpType type, const dist::CollectiveDef& def,
                                             std::vector<at::Tensor> outputs, std::vector<dist::HostCall> calls,
                                             FillEach fill, uint64_t bytes);
  // collectives() with one call.
  c10::intrusive_ptr<c10d::Work> collective(c10d::OpType type, const dist::CollectiveDef& def,
                                            std::vector<at::Tensor> outputs, dist::HostCall call, Fill fill,
                                            uint64_t bytes);
  // Runs one call on the worker, through this group's transport.
  void run(const dist::CollectiveDef& def, const dist::HostCall& call);
  // Marks the calls this thread enqueues while it lives as waited for at
  // once by their caller (c10d's opts.asyncOp false), so that enqueue may run
  // them on the caller's thread.
  struct CallerWaits {
    explicit CallerWaits(bool async_op);
    ~CallerWaits();
  };
  // Runs task on the worker after the collectives queued before it (or on
  // the caller's thread, see CallerWaits, when nothing is queued); the
  // Work's outputs are `outputs`, and `bytes` counts toward shm_bytes().
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs, Task task, uint64_t bytes);
  void worker_loop();
  // Runs queued items, in order, on the calling thread until `work` is
  // complete, as long as the worker has not started on the queue: a thread
  // waiting for an asynchronous call (a functional collective's wait_tensor)
  // does not wait for the worker to wake up and hand the result back.
  void help_until(dist::NeuronWork& work);
  // A queued call: what runs it, and its Work (kept alive by `run`).
  struct Item {
    std::function<void()> run;
    dist::NeuronWork* work = nullptr;
  };
  // Runs item on the calling thread, the lock released meanwhile, with
  // inline_ set so that the worker waits; then marks its Work retired and
  // wakes the worker for what was queued meanwhile. Called and returns with
  // `lock` (on mu_) held.
  void run_here(std::unique_lock<std::mutex>& lock, const Item& item);
  // Destroys the finished items on the calling thread once `work`'s own is
  // among them (the worker hands an item over right after running it).
  void release_finished(dist::NeuronWork& work);
  void track_if_coalescing(const c10::intrusive_ptr<c10d::Work>& work);
  c10::intrusive_ptr<c10d::Work> point_to_point(c10d::OpType type, std::vector<at::Tensor>& tensors, int peer, int tag);

  // This host's ranks of the group, rendezvousing through `store`.
  std::unique_ptr<dist::ShmCollectives> join_host_segment(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size);

  std::unique_ptr<dist::ShmCollectives> shm_;          // this host's ranks (all of them on a single host)
  std::unique_ptr<dist::MultiHostCollectives> multi_;  // set when the group spans hosts
  std::unique_ptr<dist::ShmPointToPoint> p2p_;         // single host only; uses shm_'s segment: declared after it
  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  std::string group_name_;
  uint64_t splits_ = 0;
  int host_count_ = 1;  // calls to split() so far: the same on every rank
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  // Finished items wait here to be destroyed on a calling thread: their
  // tensors may own Python objects, which the worker must never release.
  std::vector<Item> finished_;
  bool stop_ = false;
  bool busy_ = false;                    // the worker is running an item
  dist::NeuronWork* running_ = nullptr;  // the item's Work, while busy_
  bool inline_ = false;                  // a caller's thread is running one (enqueue)
  std::condition_variable idle_cv_;
  bool coalescing_ = false;
  std::vector<c10::intrusive_ptr<c10d::Work>> coalesced_;
  std::atomic<uint64_t> shm_bytes_{0};
  std::atomic<uint64_t> sequence_{0};
  std::thread worker_;
};

}  // namespace torch_neuronx
