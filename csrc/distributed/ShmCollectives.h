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

#include "distributed/Reductions.h"
#include "distributed/ShmGroup.h"

namespace torch_neuronx::dist {

enum class Collective : uint32_t { kBarrier = 1, kAllreduce, kBroadcast, kAllgather, kReduceScatter };

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

  ShmGroup& group() { return *group_; }

 private:
  void step(const char* what);
  void check_signature(const char* what, const CallSignature& mine);
  std::string describe(const char* what) const;

  std::unique_ptr<ShmGroup> group_;
  std::string group_name_;
  std::chrono::milliseconds timeout_;
  uint64_t phase_ = 1;
};

}  // namespace torch_neuronx::dist
