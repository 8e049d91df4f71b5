#include "distributed/c10d/ProcessGroupNeuron.h"

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

#include "distributed/c10d/CollectiveArgs.h"
#include "distributed/c10d/HostBuffers.h"
#include "distributed/c10d/NeuronWork.h"
#include "distributed/multihost/MultiHostCollectives.h"
#include "profiler/NeuronTrace.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

constexpr size_t kSlotBytes = 4u << 20;  // per rank; larger tensors move in chunks
constexpr size_t kRingBytes = 1u << 20;  // per ordered pair of ranks, for send / recv

// Every live group, for drain_all.
std::mutex live_mu;
std::vector<ProcessGroupNeuron*>& live_groups() {
  static auto* groups = new std::vector<ProcessGroupNeuron*>();  // leaked: used during exit
  return *groups;
}

}  // namespace

using namespace dist::args;

ProcessGroupNeuron::ProcessGroupNeuron(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       std::chrono::milliseconds timeout, std::string group_name, HostSpan span)
    : Backend(rank, size), store_(store), timeout_(timeout), group_name_(std::move(group_name)) {
  const bool multi_host = !span.host_of_rank.empty();
  TORCH_CHECK(!multi_host || static_cast<int>(span.host_of_rank.size()) == size,
              "neuron process group: ", span.host_of_rank.size(), " host entries for a group of ", size);
  int local_rank = rank, local_size = size;
  c10::intrusive_ptr<c10d::Store> local_store = store;
  if (multi_host) {
    const int host = span.host_of_rank[rank];
    local_rank = static_cast<int>(std::count(span.host_of_rank.begin(), span.host_of_rank.begin() + rank, host));
    local_size = static_cast<int>(std::count(span.host_of_rank.begin(), span.host_of_rank.end(), host));
    host_count_ = *std::max_element(span.host_of_rank.begin(), span.host_of_rank.end()) + 1;
    local_store = c10::make_intrusive<c10d::PrefixStore>("torch_neuronx/host/" + std::to_string(host) + "/", store);
  }
  shm_ = join_host_segment(local_store, local_rank, local_size);
  if (multi_host) {
    TORCH_CHECK(span.world, "neuron process group: a group spanning hosts needs a Gloo group of all its ranks");
    TORCH_CHECK((local_rank == 0) == static_cast<bool>(span.leaders), "neuron process group: rank ", rank,
                (local_rank == 0 ? " leads its host but has no" : " does not lead its host but has a"),
                " leaders' Gloo group");
    multi_ = std::make_unique<dist::MultiHostCollectives>(*shm_, rank, size, span.world, span.leaders, group_name_);
  } else {
    p2p_ = std::make_unique<dist::ShmPointToPoint>(shm_->group(), group_name_, timeout);
  }
  worker_ = std::thread([this] { worker_loop(); });
  std::lock_guard<std::mutex> lock(live_mu);
  live_groups().push_back(this);
}

std::unique_ptr<dist::ShmCollectives> ProcessGroupNeuron::join_host_segment(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size) {
  const std::string key = "torch_neuronx/shm_name";
  std::string name;
  std::unique_ptr<dist::ShmCollectives> shm;
  try {
    std::unique_ptr<dist::ShmGroup> group;
    if (rank == 0) {
      dist::ShmGroup::remove_orphans("pg");
      name = dist::ShmGroup::unique_name("pg");
      group = std::make_unique<dist::ShmGroup>(name, rank, size, kSlotBytes, kRingBytes, /*create=*/true);
      store->set(key, std::vector<uint8_t>(name.begin(), name.end()));
    } else {
      try {
        store->wait({key}, timeout_);
      } catch (const std::exception& e) {
        throw dist::DistError("neuron process group '" + group_name_ + "', init: rank 0 of the group never " +
                              "published the shared-memory segment within " + std::to_string(timeout_.count()) +
                              " ms (" + e.what() + ")");
      }
      std::vector<uint8_t> v = store->get(key);
      name.assign(v.begin(), v.end());
      group = std::make_unique<dist::ShmGroup>(name, rank, size, kSlotBytes, kRingBytes, /*create=*/false);
    }
    shm = std::make_unique<dist::ShmCollectives>(std::move(group), group_name_, timeout_);
    shm->wait_for_all_ranks("init");
  } catch (const dist::DistError& e) {
    if (rank == 0 && !name.empty()) dist::ShmGroup::unlink(name);
    TORCH_CHECK_WITH(DistBackendError, false, e.what());
  }
  if (rank == 0) dist::ShmGroup::unlink(name);  // every rank has it mapped: the name is no longer needed
  return shm;
}

ProcessGroupNeuron::~ProcessGroupNeuron() {
  {
    std::lock_guard<std::mutex> lock(live_mu);
    auto& groups = live_groups();
    groups.erase(std::remove(groups.begin(), groups.end(), this), groups.end());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  p2p_.reset();
}

c10::intrusive_ptr<c10d::Backend::Options> ProcessGroupNeuron::getBackendOptions() {
  auto opts = c10::make_intrusive<NeuronBackendOptions>(timeout_);
  opts->group_name = group_name_;
  return opts;
}

c10::intrusive_ptr<c10d::Backend> ProcessGroupNeuron::split(
    const c10::intrusive_ptr<c10d::Store>& /*store: see the header*/, const std::vector<int>& ranks,
    const c10::intrusive_ptr<Options>& opts) {
  TORCH_CHECK(!multi_, "neuron process group '", group_name_, "': split_group of a group that spans hosts is not ",
              "supported yet; use dist.new_group");
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  std::string prefix = "torch_neuronx/split/" + std::to_string(splits_++) + "/";
  for (int r : sorted) prefix += std::to_string(r) + ",";
  auto it = std::find(sorted.begin(), sorted.end(), getRank());
  if (it == sorted.end()) return nullptr;
  const auto timeout = opts ? opts->timeout : timeout_;
  const std::string name = opts && !opts->group_name.empty() ? opts->group_name : group_name_ + ":split";
  auto own_store = c10::make_intrusive<c10d::PrefixStore>(prefix + "/", store_);
  return c10::make_intrusive<ProcessGroupNeuron>(own_store, static_cast<int>(it - sorted.begin()),
                                                 static_cast<int>(sorted.size()), timeout, name);
}

void ProcessGroupNeuron::drain_all(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::lock_guard<std::mutex> live(live_mu);  // a group's destructor waits for this
  for (ProcessGroupNeuron* pg : live_groups()) {
    std::unique_lock<std::mutex> lock(pg->mu_);
    pg->idle_cv_.wait_until(lock, deadline, [&] { return pg->queue_.empty() && !pg->busy_ && !pg->inline_; });
  }
}

void ProcessGroupNeuron::release_all_finished() {
  std::vector<Item> items;  // destroyed on this thread, after the locks
  std::vector<dist::ShmPointToPoint::Done> dones;
  {
    std::lock_guard<std::mutex> live(live_mu);
    for (ProcessGroupNeuron* pg : live_groups()) {
      {
        std::unique_lock<std::mutex> lock(pg->mu_);
        // A call the worker has completed is handed over right after: wait for that, not for calls still running.
        pg->idle_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return !pg->busy_ || !pg->running_->completing(); });
        for (Item& item : pg->finished_) items.push_back(std::move(item));
        pg->finished_.clear();
      }
      if (pg->p2p_) pg->p2p_->take_finished(dones);
    }
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::collectives(c10d::OpType type, const dist::CollectiveDef& def,
                                                               std::vector<at::Tensor> outputs,
                                                               std::vector<dist::HostCall> calls, FillEach fill,
                                                               uint64_t bytes) {
  if (def.check) {
    for (const dist::HostCall& call : calls) def.check(def, call, getSize());
  }
  const int32_t device = outputs.empty() || !outputs[0].is_privateuseone() ? -1 : outputs[0].device().index();
  const uint64_t correlation = trace::current_correlation();
  return enqueue(
      type, std::move(outputs),
      [this, &def, calls = std::move(calls), fill = std::move(fill), device, correlation, bytes]() mutable {
        trace::ActivityScope activity(trace::Kind::kCollective, "c10d::" + std::string(def.name),
                                      multi_ ? "shared memory, Gloo between hosts" : "shared memory");
        if (activity.on()) {
          if (device >= 0) activity.set_device(device);
          activity.set_correlation(correlation);
          activity.set_bytes(static_cast<int64_t>(bytes));
          activity.set_world(getSize());
        }
        dist::HostBuffers buffers;
        for (size_t i = 0; i < calls.size(); ++i) {
          fill(buffers, calls[i], i);
          run(def, calls[i]);
        }
        buffers.finish();
      },
      bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::collective(c10d::OpType type, const dist::CollectiveDef& def,
                                                              std::vector<at::Tensor> outputs, dist::HostCall call,
                                                              Fill fill, uint64_t bytes) {
  return collectives(
      type, def, std::move(outputs), {std::move(call)},
      [fill = std::move(fill)](dist::HostBuffers& b, dist::HostCall& c, size_t) { fill(b, c); }, bytes);
}

void ProcessGroupNeuron::run(const dist::CollectiveDef& def, const dist::HostCall& call) {
  dist::run_collective(def, call, *shm_, multi_.get());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::run_named(const std::string& name, std::vector<at::Tensor>& inputs,
                                                             std::vector<at::Tensor>& outputs, int root) {
  const dist::CollectiveDef& def = dist::find_collective(name);
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1, name, ": takes one input and one output tensor");
  check_tensor(inputs[0], def.name);
  check_tensor(outputs[0], def.name);
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  dist::HostCall call = call_of(inputs[0]);
  call.root = root;
  return collective(
      c10d::OpType::UNKNOWN, def, outputs, call,
      [in = inputs[0], out = outputs[0]](auto& b, auto& c) { c.in = b.input(in), c.out = b.output(out); },
      inputs[0].nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  CallerWaits waits(opts.asyncOp);
  at::Tensor t = single(tensors, "allreduce");
  dist::HostCall call = call_of(t);
  call.spec = reduce_spec(opts.reduceOp, t.scalar_type(), "allreduce");
  wait_for_producers(tensors);
  return collective(
      c10d::OpType::ALLREDUCE, dist::kAllreduce, tensors, call, [t](auto& b, auto& c) { c.in = c.out = b.inout(t); },
      t.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  std::vector<dist::HostCall> calls;
  uint64_t bytes = 0;
  for (const at::Tensor& t : tensors) {
    check_tensor(t, "allreduce_coalesced");
    calls.push_back(call_of(t));
    calls.back().spec = reduce_spec(opts.reduceOp, t.scalar_type(), "allreduce_coalesced");
    bytes += t.nbytes();
  }
  wait_for_producers(tensors);
  return collectives(
      c10d::OpType::ALLREDUCE_COALESCED, dist::kAllreduce, tensors, calls,
      [tensors](auto& b, auto& c, size_t i) { c.in = c.out = b.inout(tensors[i]); }, bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  CallerWaits waits(opts.asyncOp);
  at::Tensor t = single(tensors, "broadcast");
  dist::HostCall call = call_of(t);
  call.root = static_cast<int>(opts.rootRank);
  wait_for_producers(tensors);
  return collective(
      c10d::OpType::BROADCAST, dist::kBroadcast, tensors, call, [t](auto& b, auto& c) { c.in = c.out = b.inout(t); },
      t.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions& opts) {
  CallerWaits waits(opts.asyncOp);
  check_tensor(input, "all_gather_into_tensor");
  check_tensor(output, "all_gather_into_tensor");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "all_gather_into_tensor: output dtype ",
              output.scalar_type(), " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(output.numel() == input.numel() * getSize(), "all_gather_into_tensor: output has ", output.numel(),
              " elements, expected world size x input = ", getSize(), " x ", input.numel());
  wait_for_producers({input, output});
  return collective(
      c10d::OpType::_ALLGATHER_BASE, dist::kAllgather, {output}, call_of(input),
      [input, output](auto& b, auto& c) { c.in = b.input(input), c.out = b.output(output); },
      input.nbytes() * getSize());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
  at::Tensor input = single(inputs, "all_gather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "all_gather: expected one ",
              "list of ", getSize(), " output tensors");
  for (const at::Tensor& o : outputs[0]) check_like(o, input, "all_gather", "output");
  std::vector<at::Tensor> outs = outputs[0];
  wait_for_producers(outs);
  wait_for_producers(inputs);
  return collective(
      c10d::OpType::ALLGATHER, dist::kAllgather, outs, call_of(input),
      [input, outs](auto& b, auto& c) { c.in = b.input(input), c.out = b.packed_outputs(outs); },
      input.nbytes() * getSize());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  CallerWaits waits(opts.asyncOp);
  check_tensor(input, "reduce_scatter_tensor");
  check_tensor(output, "reduce_scatter_tensor");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "reduce_scatter_tensor: output dtype ", output.scalar_type(),
              " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(input.numel() == output.numel() * getSize(), "reduce_scatter_tensor: input has ", input.numel(),
              " elements, expected world size x output = ", getSize(), " x ", output.numel());
  dist::HostCall call = call_of(output);
  call.spec = reduce_spec(opts.reduceOp, input.scalar_type(), "reduce_scatter_tensor");
  wait_for_producers({input, output});
  return collective(
      c10d::OpType::_REDUCE_SCATTER_BASE, dist::kReduceScatter, {output}, call,
      [input, output](auto& b, auto& c) { c.in = b.input(input), c.out = b.output(output); }, input.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  at::Tensor output = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "reduce_scatter: expected ",
              "one list of ", getSize(), " input tensors");
  for (const at::Tensor& i : inputs[0]) check_like(i, output, "reduce_scatter", "input");
  dist::HostCall call = call_of(output);
  call.spec = reduce_spec(opts.reduceOp, output.scalar_type(), "reduce_scatter");
  std::vector<at::Tensor> ins = inputs[0];
  wait_for_producers(ins);
  return collective(
      c10d::OpType::REDUCE_SCATTER, dist::kReduceScatter, outputs, call,
      [ins, output](auto& b, auto& c) { c.in = b.packed_inputs(ins), c.out = b.output(output); },
      output.nbytes() * getSize());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::barrier(const c10d::BarrierOptions& opts) {
  CallerWaits waits(opts.asyncOp);
  return collective(c10d::OpType::BARRIER, dist::kBarrier, {}, {}, [](auto&, auto&) {}, 0);
}

}  // namespace torch_neuronx
