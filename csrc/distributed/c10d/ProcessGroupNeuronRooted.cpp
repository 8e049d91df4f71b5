// The neuron process group's rooted collectives (reduce, gather, scatter),
// all-to-all and the coalesced forms of all-gather and reduce-scatter.
#include <c10/util/Exception.h>

#include "distributed/c10d/CollectiveArgs.h"
#include "distributed/c10d/HostBuffers.h"
#include "distributed/c10d/ProcessGroupNeuron.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

using namespace dist::args;

// Rows of dim 0 per peer: the given splits, or equal parts when empty.
std::vector<size_t> split_bytes(const at::Tensor& t, const std::vector<int64_t>& splits, int world, const char* role) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const size_t row_bytes = rows == 0 ? 0 : t.nbytes() / rows;
  std::vector<size_t> out(world);
  if (splits.empty()) {
    TORCH_CHECK(rows % world == 0, "all_to_all_single: the ", role, " tensor's first dimension (", rows,
                ") must divide by the world size ", world, " when no split sizes are given");
    for (int r = 0; r < world; ++r) out[r] = rows / world * row_bytes;
    return out;
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == world, "all_to_all_single: ", role, "_split_sizes has ", splits.size(),
              " entries, expected one per rank (", world, ")");
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
  dist::HostCall call = call_of(t);
  call.root = static_cast<int>(opts.rootRank);
  call.spec = reduce_spec(opts.reduceOp, t.scalar_type(), "reduce");
  wait_for_producers(tensors);
  return collective(
      c10d::OpType::REDUCE, dist::kReduce, tensors, call, [t](auto& b, auto& c) { c.in = c.out = b.inout(t); },
      t.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  at::Tensor input = single(inputs, "gather");
  dist::HostCall call = call_of(input);
  call.root = static_cast<int>(opts.rootRank);
  dist::kGather.check(dist::kGather, call, getSize());
  std::vector<at::Tensor> outs;
  if (getRank() == call.root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "gather: the root needs ",
                "one list of ", getSize(), " output tensors");
    for (const at::Tensor& o : outputs[0]) check_like(o, input, "gather", "output");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()), "gather: only the root (rank ",
                call.root, ") takes output tensors");
  }
  wait_for_producers(inputs);
  return collective(
      c10d::OpType::GATHER, dist::kGather, outs, call,
      [input, outs](auto& b, auto& c) { c.in = b.input(input), c.out = b.packed_outputs(outs); }, input.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  at::Tensor output = single(outputs, "scatter");
  dist::HostCall call = call_of(output);
  call.root = static_cast<int>(opts.rootRank);
  dist::kScatter.check(dist::kScatter, call, getSize());
  std::vector<at::Tensor> ins;
  if (getRank() == call.root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "scatter: the root needs ",
                "one list of ", getSize(), " input tensors");
    for (const at::Tensor& i : inputs[0]) check_like(i, output, "scatter", "input");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()), "scatter: only the root (rank ", call.root,
                ") takes input tensors");
  }
  wait_for_producers(ins);
  return collective(
      c10d::OpType::SCATTER, dist::kScatter, outputs, call,
      [ins, output](auto& b, auto& c) { c.in = b.packed_inputs(ins), c.out = b.output(output); }, output.nbytes());
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
  dist::HostCall call = call_of(input);
  call.send_bytes = split_bytes(input, input_splits, world, "input");
  call.recv_bytes = split_bytes(output, output_splits, world, "output");
  wait_for_producers({input, output});
  return collective(
      c10d::OpType::ALLTOALL_BASE, dist::kAlltoall, {output}, call,
      [input, output, world](auto& b, auto& c) {
        const char* in = b.input(input);
        char* out = b.output(output);
        size_t s = 0, r = 0;
        for (int p = 0; p < world; ++p) {
          c.send.push_back(in + s), s += c.send_bytes[p];
          c.recv.push_back(out + r), r += c.recv_bytes[p];
        }
      },
      input.nbytes());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  const int world = getSize();
  TORCH_CHECK(static_cast<int>(inputs.size()) == world && static_cast<int>(outputs.size()) == world,
              "all_to_all: expected ", world, " input and ", world, " output tensors, got ", inputs.size(), " and ",
              outputs.size());
  dist::HostCall call;
  call.dtype = inputs[0].scalar_type();
  uint64_t bytes = 0;
  for (int p = 0; p < world; ++p) {
    check_tensor(inputs[p], "all_to_all");
    check_tensor(outputs[p], "all_to_all");
    TORCH_CHECK(
        inputs[p].scalar_type() == inputs[0].scalar_type() && outputs[p].scalar_type() == inputs[0].scalar_type(),
        "all_to_all: every tensor must have the dtype of the first input (", inputs[0].scalar_type(), ")");
    call.send_bytes.push_back(inputs[p].nbytes());
    call.recv_bytes.push_back(outputs[p].nbytes());
    bytes += inputs[p].nbytes();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  return collective(
      c10d::OpType::ALLTOALL, dist::kAlltoall, outputs, call,
      [inputs, outputs, world](auto& b, auto& c) {
        for (int p = 0; p < world; ++p) {
          c.send.push_back(b.input(inputs[p]));
          c.recv.push_back(b.output(outputs[p]));
        }
      },
      bytes);
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
    TORCH_CHECK(static_cast<int>(output_lists[i].size()) == getSize(), "all_gather_coalesced: output list ", i, " has ",
                output_lists[i].size(), " tensors, expected ", getSize());
    for (const at::Tensor& o : output_lists[i]) check_like(o, inputs[i], "all_gather_coalesced", "output");
    outs.insert(outs.end(), output_lists[i].begin(), output_lists[i].end());
    bytes += inputs[i].nbytes() * getSize();
  }
  wait_for_producers(inputs);
  wait_for_producers(outs);
  std::vector<dist::HostCall> calls;
  for (const at::Tensor& in : inputs) calls.push_back(call_of(in));
  return collectives(
      c10d::OpType::ALLGATHER_COALESCED, dist::kAllgather, outs, calls,
      [inputs, output_lists](auto& b, auto& c, size_t i) {
        c.in = b.input(inputs[i]), c.out = b.packed_outputs(output_lists[i]);
      },
      bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                   std::vector<at::Tensor>& inputs,
                                                                                   const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputs.size() == inputs.size(), "all_gather_into_tensor_coalesced: ", inputs.size(), " inputs but ",
              outputs.size(), " outputs");
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "all_gather_into_tensor_coalesced");
    check_tensor(outputs[i], "all_gather_into_tensor_coalesced");
    TORCH_CHECK(
        outputs[i].scalar_type() == inputs[i].scalar_type() && outputs[i].numel() == inputs[i].numel() * getSize(),
        "all_gather_into_tensor_coalesced: output ", i, " must hold world size x input ", i, " elements of ",
        inputs[i].scalar_type());
    bytes += inputs[i].nbytes() * getSize();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  std::vector<dist::HostCall> calls;
  for (const at::Tensor& in : inputs) calls.push_back(call_of(in));
  return collectives(
      c10d::OpType::COALESCED, dist::kAllgather, outputs, calls,
      [inputs, outputs](auto& b, auto& c, size_t i) { c.in = b.input(inputs[i]), c.out = b.output(outputs[i]); },
      bytes);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "reduce_scatter_tensor_coalesced: ", inputs.size(), " inputs but ",
              outputs.size(), " outputs");
  std::vector<dist::HostCall> calls;
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "reduce_scatter_tensor_coalesced");
    check_tensor(outputs[i], "reduce_scatter_tensor_coalesced");
    TORCH_CHECK(
        outputs[i].scalar_type() == inputs[i].scalar_type() && inputs[i].numel() == outputs[i].numel() * getSize(),
        "reduce_scatter_tensor_coalesced: input ", i, " must hold world size x output ", i, " elements of ",
        outputs[i].scalar_type());
    calls.push_back(call_of(outputs[i]));
    calls.back().spec = reduce_spec(opts.reduceOp, inputs[i].scalar_type(), "reduce_scatter_tensor_coalesced");
    bytes += inputs[i].nbytes();
  }
  wait_for_producers(inputs);
  wait_for_producers(outputs);
  return collectives(
      c10d::OpType::COALESCED, dist::kReduceScatter, outputs, calls,
      [inputs, outputs](auto& b, auto& c, size_t i) { c.in = b.input(inputs[i]), c.out = b.output(outputs[i]); },
      bytes);
}

}  // namespace torch_neuronx
