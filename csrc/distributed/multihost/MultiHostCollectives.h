// Collectives of a group whose ranks span hosts. Between hosts the data goes
// over TCP through Gloo (a proven transport; two Gloo groups made by the
// Python layer: every rank of the group, and one leader per host), on CPU
// tensors over the call's host bytes.
// allreduce is hierarchical: reduce on each host through shared memory, an
// allreduce among the hosts' leaders, a broadcast on each host. The other
// collectives run flat over the all-ranks Gloo group; reduce, reduce_scatter
// go through the hierarchical allreduce.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "distributed/collectives/Collectives.h"
#include "distributed/onehost/ShmCollectives.h"

#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

// The transport across hosts: the entries of the collective table
// (Collectives.cpp) call these; each expects the host ranks' signatures checked.
class TORCH_NEURONX_API MultiHostCollectives {
 public:
  // `local` holds this host's ranks (the first one leads); `world` spans the
  // group with the group's ranks; `leaders` is null unless this rank leads.
  MultiHostCollectives(ShmCollectives& local, int rank, int world_size, c10::intrusive_ptr<c10d::Backend> world,
                       c10::intrusive_ptr<c10d::Backend> leaders, std::string group_name);

  void barrier();
  void allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec);
  void broadcast(void* data, size_t numel, c10::ScalarType dtype, int root);
  void allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype);
  void reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec);
  void reduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec, int root);
  void gather(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root);
  void scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root);
  void alltoall(const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes, c10::ScalarType dtype);

  // Point-to-point over the all-ranks Gloo group (its Work completes when the
  // transfer did).
  c10::intrusive_ptr<c10d::Work> send(at::Tensor& host_bytes, int dst, int tag);
  c10::intrusive_ptr<c10d::Work> recv(at::Tensor& host_bytes, int src, int tag);

  // Waits for a Gloo call (counting `bytes` as sent over TCP); its failure
  // becomes a DistError naming the group and `what`.
  void wait_for(const c10::intrusive_ptr<c10d::Work>& work, const char* what, size_t bytes);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  // Bytes this rank handed to each transport (read by torch_neuronx._distributed.tcp_bytes / shm_bytes).
  uint64_t tcp_bytes() const { return tcp_bytes_.load(); }
  uint64_t shm_bytes() const { return shm_bytes_.load(); }

 private:
  void on_host(size_t bytes) { shm_bytes_.fetch_add(bytes); }

  ShmCollectives& local_;
  int rank_, world_size_;
  c10::intrusive_ptr<c10d::Backend> world_, leaders_;
  std::string group_name_;
  std::atomic<uint64_t> tcp_bytes_{0}, shm_bytes_{0};
};

// A CPU tensor over `numel` elements of host bytes at `data` (owned elsewhere).
TORCH_NEURONX_API at::Tensor wrap_host_bytes(const void* data, size_t numel, c10::ScalarType dtype);

}  // namespace torch_neuronx::dist
