// The neuron process group's rooted collectives (reduce, gather, scatter),
// all-to-all and the coalesced forms of all-gather and reduce-scatter.
#include <c10/util/Exception.h>

#include <cstring>

#include "distributed/CollectiveArgs.h"
#include "distributed/ProcessGroupNeuron.h"

namespace torch_neuronx {
namespace {

using namespace dist::args;

void check_like(const at::Tensor& t, const at::Tensor& like, const char* what, const char* role) {
  check_tensor(t, what);
  TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), what, ": every ", role,
              " tensor must match the input's size and dtype (", like.numel(), " x ", like.scalar_type(), "), got ",
              t.numel(), " x ", t.scalar_type());
}

// Rows of dim 0 per peer: the given splits, or equal parts when empty.
std::vector<size_t> split_bytes(const at::Tensor& t, const std::vector<int64_t>& splits, int world,
                                const char* role) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const size_t row_bytes = rows == 0 ? 0 : t.nbytes() / rows;
  std::vector<size_t> out(world);
  if (splits.empty()) {
    TORCH_CHECK(rows % world == 0, "all_to_all_single: the ", role, " tensor's first dimension (", rows,
                ") must divide by the world size ", world, " when no split sizes are given");
    for (int r = 0; r < world; ++r) out[r] = rows / world * row_bytes;
    return out;
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == world, "all_to_all_single: ", role, "_split_sizes has ",
              splits.size(), " entries, expected one per rank (", world, ")");
  int64_t total = 0;
  for (int r = 0; r < world; ++r) {
    TORCH_CHECK(splits[r] >= 0, "all_to_all_single: ", role, "_split_sizes[", r, "] = ", splits[r], " is negative");
    out[r] = splits[r] * row_bytes;
    total += splits[r];
  }
  TORCH_CHECK(total == rows, "all_to_all_single: ", role, "_split_sizes sum to ", total, " but the ", role,
              " tensor has ", rows, " rows");
  return out;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  at::Tensor t = single(tensors, "reduce");
  check_root(opts.rootRank, getSize(), "reduce");
  dist::ReduceSpec spec = reduce_spec(opts.reduceOp, t.scalar_type(), "reduce");
  wait_for_producers(tensors);
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::REDUCE, tensors, [this, t, spec, root] {
    coll_->reduce(t.data_ptr(), t.numel(), t.scalar_type(), spec, root);
  }, t.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  at::Tensor input = single(inputs, "gather");
  check_root(opts.rootRank, getSize(), "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (getRank() == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "gather: the root needs ",
                "one list of ", getSize(), " output tensors");
    for (const at::Tensor& o : outputs[0]) check_like(o, input, "gather", "output");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()), "gather: only the root (rank ", root,
                ") takes output tensors");
  }
  wait_for_producers(inputs);
  return enqueue(c10d::OpType::GATHER, outs, [this, input, outs, root] {
    std::vector<char> gathered(outs.empty() ? 0 : input.nbytes() * outs.size());
    coll_->gather(input.data_ptr(), gathered.data(), input.numel(), input.scalar_type(), root);
    for (size_t r = 0; r < outs.size(); ++r) {
      std::memcpy(outs[r].data_ptr(), gathered.data() + r * input.nbytes(), input.nbytes());
    }
  }, input.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  at::Tensor output = single(outputs, "scatter");
  check_root(opts.rootRank, getSize(), "scatter");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (getRank() == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "scatter: the root needs ",
                "one list of ", getSize(), " input tensors");
    for (const at::Tensor& i : inputs[0]) check_like(i, output, "scatter", "input");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()), "scatter: only the root (rank ", root,
                ") takes input tensors");
  }
  wait_for_producers(ins);
  return enqueue(c10d::OpType::SCATTER, outputs, [this, ins, output, root] {
    std::vector<char> packed(output.nbytes() * ins.size());
    for (size_t r = 0; r < ins.size(); ++r) {
      std::memcpy(packed.data() + r * output.nbytes(), ins[r].data_ptr(), output.nbytes());
    }
    coll_->scatter(packed.data(), output.data_ptr(), output.numel(), output.scalar_type(), root);
  }, output.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<int64_t>& output_splits,
                                                                 std::vector<int64_t>& input_splits,
                                                                 const c10d::AllToAllOptions&) {
  check_tensor(input, "all_to_all_single");
  check_tensor(output, "all_to_all_single");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "all_to_all_single: output dtype ", output.scalar_type(),
              " differs from input dtype ", input.scalar_type());
  const int world = getSize();
  std::vector<size_t> send_bytes = split_bytes(input, input_splits, world, "input");
  std::vector<size_t> recv_bytes = split_bytes(output, output_splits, world, "output");
  wait_for_producers({input, output});
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output}, [this, input, output, send_bytes, recv_bytes, world] {
    std::vector<const char*> send(world);
    std::vector<char*> recv(world);
    size_t s = 0, r = 0;
    for (int p = 0; p < world; ++p) {
      send[p] = static_cast<const char*>(input.data_ptr()) + s, s += send_bytes[p];
      recv[p] = static_cast<char*>(output.data_ptr()) + r, r += recv_bytes[p];
    }
    coll_->alltoall(send, send_bytes, recv, recv_bytes, input.scalar_type());
  }, input.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  const int world = getSize();
  TORCH_CHECK(static_cast<int>(inputs.size()) == world && static_cast<int>(outputs.size()) == world,
              "all_to_all: expected ", world, " input and ", world, " output tensors, got ", inputs.size(), " and ",
              outputs.size());
  std::vector<size_t> send_bytes(world), recv_bytes(world);
  for (int p = 0; p < world; ++p) {
    check_tensor(inputs[p], "all_to_all");
    check_tensor(outputs[p], "all_to_all");
    TORCH_CHECK(inputs[p].scalar_type() == inputs[0].scalar_type() &&
                    outputs[p].scalar_type() == inputs[0].scalar_type(),
                "all_to_all: every tensor must have the dtype of the first input (", inputs[0].scalar_type(), ")");
    send_bytes[p] = inputs[p].nbytes();
    recv_bytes[p] = outputs[p].nbytes();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  return enqueue(c10d::OpType::ALLTOALL, outputs, [this, inputs, outputs, send_bytes, recv_bytes, world] {
    std::vector<const char*> send(world);
    std::vector<char*> recv(world);
    for (int p = 0; p < world; ++p) {
      send[p] = static_cast<const char*>(inputs[p].data_ptr());
      recv[p] = static_cast<char*>(outputs[p].data_ptr());
    }
    coll_->alltoall(send, send_bytes, recv, recv_bytes, inputs[0].scalar_type());
  }, [&] { uint64_t b = 0; for (size_t x : send_bytes) b += x; return b; }());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& output_lists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(output_lists.size() == inputs.size(), "all_gather_coalesced: ", inputs.size(), " inputs but ",
              output_lists.size(), " output lists");
  std::vector<at::Tensor> outs;
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "all_gather_coalesced");
    TORCH_CHECK(static_cast<int>(output_lists[i].size()) == getSize(), "all_gather_coalesced: output list ", i,
                " has ", output_lists[i].size(), " tensors, expected ", getSize());
    for (const at::Tensor& o : output_lists[i]) check_like(o, inputs[i], "all_gather_coalesced", "output");
    outs.insert(outs.end(), output_lists[i].begin(), output_lists[i].end());
    bytes += inputs[i].nbytes() * getSize();
  }
  wait_for_producers(inputs);
  wait_for_producers(outs);
  return enqueue(c10d::OpType::ALLGATHER_COALESCED, outs, [this, inputs, outs] {
    const size_t world = getSize();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const at::Tensor& in = inputs[i];
      std::vector<char> gathered(in.nbytes() * world);
      coll_->allgather(in.data_ptr(), gathered.data(), in.numel(), in.scalar_type());
      for (size_t r = 0; r < world; ++r) {
        std::memcpy(outs[i * world + r].data_ptr(), gathered.data() + r * in.nbytes(), in.nbytes());
      }
    }
  }, bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputs.size() == inputs.size(), "all_gather_into_tensor_coalesced: ", inputs.size(), " inputs but ",
              outputs.size(), " outputs");
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "all_gather_into_tensor_coalesced");
    check_tensor(outputs[i], "all_gather_into_tensor_coalesced");
    TORCH_CHECK(outputs[i].scalar_type() == inputs[i].scalar_type() &&
                    outputs[i].numel() == inputs[i].numel() * getSize(),
                "all_gather_into_tensor_coalesced: output ", i, " must hold world size x input ", i, " elements of ",
                inputs[i].scalar_type());
    bytes += inputs[i].nbytes() * getSize();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  return enqueue(c10d::OpType::COALESCED, outputs, [this, inputs, outputs] {
    for (size_t i = 0; i < inputs.size(); ++i) {
      coll_->allgather(inputs[i].data_ptr(), outputs[i].data_ptr(), inputs[i].numel(), inputs[i].scalar_type());
    }
  }, bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "reduce_scatter_tensor_coalesced: ", inputs.size(), " inputs but ",
              outputs.size(), " outputs");
  std::vector<dist::ReduceSpec> specs;
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "reduce_scatter_tensor_coalesced");
    check_tensor(outputs[i], "reduce_scatter_tensor_coalesced");
    TORCH_CHECK(outputs[i].scalar_type() == inputs[i].scalar_type() &&
                    inputs[i].numel() == outputs[i].numel() * getSize(),
                "reduce_scatter_tensor_coalesced: input ", i, " must hold world size x output ", i, " elements of ",
                outputs[i].scalar_type());
    specs.push_back(reduce_spec(opts.reduceOp, inputs[i].scalar_type(), "reduce_scatter_tensor_coalesced"));
    bytes += inputs[i].nbytes();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  return enqueue(c10d::OpType::COALESCED, outputs, [this, inputs, outputs, specs] {
    for (size_t i = 0; i < inputs.size(); ++i) {
      coll_->reduce_scatter(inputs[i].data_ptr(), outputs[i].data_ptr(), outputs[i].numel(),
                           inputs[i].scalar_type(), specs[i]);
    }
  }, bytes);
}

}  // namespace torch_neuronx
