// Collectives among the ranks of one host over a ShmGroup, on contiguous host
// buffers (device memory is host-addressable in the emulator). Every call
// first checks that all ranks called the same collective with the same dtype
// and sizes (a mismatch raises on every rank), then moves the data through the
// slots in chunks: allreduce is a reduce-scatter (each rank reduces its part
// of every chunk, in rank order, so all ranks get identical bits) followed by
// an all-gather. No Python, no torch ops on the data path.
#pragma once

#include <c10/core/ScalarType.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/HostCollectives.h"
#include "distributed/Reductions.h"
#include "distributed/ShmGroup.h"

namespace torch_neuronx::dist {

enum class Collective : uint32_t { kBarrier = 1, kAllreduce, kBroadcast, kAllgather, kReduceScatter, kReduce, kGather, kScatter,
                                  kAlltoall };

class ShmCollectives : public HostCollectives {
 public:
  ShmCollectives(std::unique_ptr<ShmGroup> group, std::string group_name, std::chrono::milliseconds timeout);

  // Phase 1, right after every rank mapped the segment.
  void wait_for_all_ranks(const std::string& what);

  // HostCollectives, over this host's segment.
  void barrier() override;
  void allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec) override;
  void broadcast(void* data, size_t numel, c10::ScalarType dtype, int root) override;
  void allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype) override;
  void reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec) override;
  void reduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec, int root) override;
  void gather(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) override;
  void scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) override;
  void alltoall(const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes, c10::ScalarType dtype) override;

  ShmGroup& group() { return *group_; }

 private:
  void step(const char* what);
  void check_signature(const char* what, const CallSignature& mine);
  std::string describe(const char* what) const;
  // root < 0: every rank receives.
  void reduce_chunks(const char* what, void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec,
                     int root);
  void gather_chunks(const char* what, const void* in, void* out, size_t total, int root);

  std::unique_ptr<ShmGroup> group_;
  std::string group_name_;
  std::chrono::milliseconds timeout_;
  uint64_t phase_ = 1;
  uint64_t calls_ = 0;  // collectives checked so far (selects the signature buffer)
  std::vector<char> scratch_;  // this rank's part while it reduces
};

}  // namespace torch_neuronx::dist
