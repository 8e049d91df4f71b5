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

#include "distributed/Reductions.h"
#include "distributed/ShmGroup.h"

namespace torch_neuronx::dist {

enum class Collective : uint32_t { kBarrier = 1, kAllreduce, kBroadcast, kAllgather, kReduceScatter, kReduce, kGather, kScatter,
                                  kAlltoall };

// How an allreduce / reduce-scatter finishes: plain, AVG (divide by the
// world size) or PREMUL_SUM (inputs multiplied by a factor first).
struct ReduceSpec {
  Reduce op = Reduce::kSum;
  bool average = false;
  double premul = 1.0;
  int64_t code = 0;  // the c10d ReduceOp, for the cross-rank check
};

class ShmCollectives {
 public:
  ShmCollectives(std::unique_ptr<ShmGroup> group, std::string group_name, std::chrono::milliseconds timeout);

  // Phase 1, right after every rank mapped the segment.
  void wait_for_all_ranks(const std::string& what);

  void barrier();
  void allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec);
  void broadcast(void* data, size_t numel, c10::ScalarType dtype, int root);
  // out holds world * numel elements, rank r's input at r * numel.
  void allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype);
  // in holds world * numel elements; out receives the reduction of part `rank`.
  void reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec);

  // data is reduced into `root`'s buffer; the others' buffers are unchanged.
  void reduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec, int root);
  // out (root only) holds world * numel elements, rank r's input at r * numel.
  void gather(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root);
  // in (root only) holds world * numel elements; rank r receives part r.
  void scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root);
  // send[d] (send_bytes[d] bytes) goes to rank d; recv[s] receives from rank
  // s. Sizes may differ per pair; they are checked across ranks first.
  void alltoall(const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes, c10::ScalarType dtype);

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
  std::vector<char> scratch_;  // this rank's part while it reduces
};

}  // namespace torch_neuronx::dist
