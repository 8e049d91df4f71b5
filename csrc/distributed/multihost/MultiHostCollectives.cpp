#include "distributed/multihost/MultiHostCollectives.h"

#include <ATen/ops/from_blob.h>

#include <cstring>
#include <exception>

#include "distributed/onehost/ShmGroup.h"

namespace torch_neuronx::dist {
namespace {

c10d::ReduceOp gloo_op(Reduce op) {
  switch (op) {
    case Reduce::kSum:
      return c10d::ReduceOp::SUM;
    case Reduce::kProduct:
      return c10d::ReduceOp::PRODUCT;
    case Reduce::kMin:
      return c10d::ReduceOp::MIN;
    case Reduce::kMax:
      return c10d::ReduceOp::MAX;
    case Reduce::kBand:
      return c10d::ReduceOp::BAND;
    case Reduce::kBor:
      return c10d::ReduceOp::BOR;
    case Reduce::kBxor:
      return c10d::ReduceOp::BXOR;
  }
  return c10d::ReduceOp::SUM;
}

}  // namespace

at::Tensor wrap_host_bytes(const void* data, size_t numel, c10::ScalarType dtype) {
  return at::from_blob(const_cast<void*>(data), {static_cast<int64_t>(numel)},
                       at::TensorOptions().dtype(dtype).device(at::kCPU));
}

MultiHostCollectives::MultiHostCollectives(ShmCollectives& local, int rank, int world_size,
                                           c10::intrusive_ptr<c10d::Backend> world,
                                           c10::intrusive_ptr<c10d::Backend> leaders, std::string group_name)
    : local_(local),
      rank_(rank),
      world_size_(world_size),
      world_(std::move(world)),
      leaders_(std::move(leaders)),
      group_name_(std::move(group_name)) {}

void MultiHostCollectives::wait_for(const c10::intrusive_ptr<c10d::Work>& work, const char* what, size_t bytes) {
  tcp_bytes_.fetch_add(bytes);
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw DistError("neuron process group '" + group_name_ + "', " + what + " between hosts (gloo): " + e.what());
  }
}

void MultiHostCollectives::barrier() { wait_for(world_->barrier(), "barrier", 0); }

void MultiHostCollectives::allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec) {
  ReduceSpec within_host = spec;
  within_host.average = false;  // divided once, after the sum over every host
  const size_t bytes = numel * c10::elementSize(dtype);
  local_.reduce_chunks("allreduce", data, numel, dtype, within_host, /*root=*/0);
  on_host(bytes);
  if (leaders_) {
    std::vector<at::Tensor> t{wrap_host_bytes(data, numel, dtype)};
    c10d::AllreduceOptions opts;
    opts.reduceOp = gloo_op(spec.op);
    wait_for(leaders_->allreduce(t, opts), "allreduce", bytes);
    if (spec.average) scale(data, numel, dtype, world_size_, /*divide=*/true);
  }
  local_.broadcast_chunks("allreduce", data, bytes, /*root=*/0);
  on_host(bytes);
}

void MultiHostCollectives::broadcast(void* data, size_t numel, c10::ScalarType dtype, int root) {
  std::vector<at::Tensor> t{wrap_host_bytes(data, numel, dtype)};
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  wait_for(world_->broadcast(t, opts), "broadcast", numel * c10::elementSize(dtype));
}

void MultiHostCollectives::allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype) {
  const size_t bytes = numel * c10::elementSize(dtype);
  std::vector<std::vector<at::Tensor>> outs(1);
  for (int r = 0; r < world_size_; ++r)
    outs[0].push_back(wrap_host_bytes(static_cast<char*>(out) + r * bytes, numel, dtype));
  std::vector<at::Tensor> ins{wrap_host_bytes(in, numel, dtype)};
  wait_for(world_->allgather(outs, ins), "allgather", bytes * world_size_);
}

void MultiHostCollectives::reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype,
                                          const ReduceSpec& spec) {
  const size_t bytes = numel * c10::elementSize(dtype);
  std::vector<char> all(bytes * world_size_);
  std::memcpy(all.data(), in, all.size());
  allreduce(all.data(), numel * world_size_, dtype, spec);
  std::memcpy(out, all.data() + rank_ * bytes, bytes);
}

void MultiHostCollectives::reduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec, int root) {
  const size_t bytes = numel * c10::elementSize(dtype);
  std::vector<char> copy(bytes);
  std::memcpy(copy.data(), data, bytes);
  allreduce(copy.data(), numel, dtype, spec);
  if (rank_ == root) std::memcpy(data, copy.data(), bytes);
}

void MultiHostCollectives::gather(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) {
  const size_t bytes = numel * c10::elementSize(dtype);
  std::vector<std::vector<at::Tensor>> outs;
  if (rank_ == root) {
    outs.emplace_back();
    for (int r = 0; r < world_size_; ++r)
      outs[0].push_back(wrap_host_bytes(static_cast<char*>(out) + r * bytes, numel, dtype));
  }
  std::vector<at::Tensor> ins{wrap_host_bytes(in, numel, dtype)};
  c10d::GatherOptions opts;
  opts.rootRank = root;
  wait_for(world_->gather(outs, ins, opts), "gather", bytes);
}

void MultiHostCollectives::scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) {
  const size_t bytes = numel * c10::elementSize(dtype);
  std::vector<std::vector<at::Tensor>> ins;
  if (rank_ == root) {
    ins.emplace_back();
    for (int r = 0; r < world_size_; ++r)
      ins[0].push_back(wrap_host_bytes(static_cast<const char*>(in) + r * bytes, numel, dtype));
  }
  std::vector<at::Tensor> outs{wrap_host_bytes(out, numel, dtype)};
  c10d::ScatterOptions opts;
  opts.rootRank = root;
  wait_for(world_->scatter(outs, ins, opts), "scatter", bytes);
}

void MultiHostCollectives::alltoall(const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                                    const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes,
                                    c10::ScalarType) {
  size_t total_send = 0, total_recv = 0;
  for (size_t b : send_bytes) total_send += b;
  for (size_t b : recv_bytes) total_recv += b;
  std::vector<char> packed(total_send + 1), unpacked(total_recv + 1);  // +1: never a null buffer
  std::vector<int64_t> in_splits, out_splits;
  for (size_t d = 0, off = 0; d < send.size(); off += send_bytes[d], ++d) {
    if (send_bytes[d]) std::memcpy(packed.data() + off, send[d], send_bytes[d]);
    in_splits.push_back(static_cast<int64_t>(send_bytes[d]));
  }
  for (size_t b : recv_bytes) out_splits.push_back(static_cast<int64_t>(b));
  at::Tensor in = wrap_host_bytes(packed.data(), total_send, at::kByte),
             out = wrap_host_bytes(unpacked.data(), total_recv, at::kByte);
  wait_for(world_->alltoall_base(out, in, out_splits, in_splits), "alltoall", total_send);
  for (size_t s = 0, off = 0; s < recv.size(); off += recv_bytes[s], ++s) {
    if (recv_bytes[s]) std::memcpy(recv[s], unpacked.data() + off, recv_bytes[s]);
  }
}

c10::intrusive_ptr<c10d::Work> MultiHostCollectives::send(at::Tensor& view, int dst, int tag) {
  std::vector<at::Tensor> t{view};
  tcp_bytes_.fetch_add(view.nbytes());
  return world_->send(t, dst, tag);
}

c10::intrusive_ptr<c10d::Work> MultiHostCollectives::recv(at::Tensor& view, int src, int tag) {
  std::vector<at::Tensor> t{view};
  tcp_bytes_.fetch_add(view.nbytes());
  return world_->recv(t, src, tag);
}

}  // namespace torch_neuronx::dist
