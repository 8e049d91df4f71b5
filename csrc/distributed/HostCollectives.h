// The collectives a process group runs on contiguous host buffers (device
// memory is host-addressable in the emulator), whatever the transport:
// ShmCollectives when every rank is on this host, MultiHostCollectives when
// the group spans hosts. Ranks are the group's; every call blocks until this
// rank's part is done and throws DistError naming what went wrong.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <vector>

#include "distributed/Reductions.h"

namespace torch_neuronx::dist {

// How an allreduce / reduce-scatter finishes: plain, AVG (divide by the
// world size) or PREMUL_SUM (inputs multiplied by a factor first).
struct ReduceSpec {
  Reduce op = Reduce::kSum;
  bool average = false;
  double premul = 1.0;
  int64_t code = 0;  // the c10d ReduceOp, for the cross-rank check
};

class HostCollectives {
 public:
  virtual ~HostCollectives() = default;

  virtual void barrier() = 0;
  virtual void allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec) = 0;
  virtual void broadcast(void* data, size_t numel, c10::ScalarType dtype, int root) = 0;
  // out holds world * numel elements, rank r's input at r * numel.
  virtual void allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype) = 0;
  // in holds world * numel elements; out receives the reduction of part `rank`.
  virtual void reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype,
                              const ReduceSpec& spec) = 0;
  // data is reduced into `root`'s buffer; the others' buffers are unchanged.
  virtual void reduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec, int root) = 0;
  // out (root only) holds world * numel elements, rank r's input at r * numel.
  virtual void gather(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) = 0;
  // in (root only) holds world * numel elements; rank r receives part r.
  virtual void scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype, int root) = 0;
  // send[d] (send_bytes[d] bytes) goes to rank d; recv[s] receives from rank
  // s. Sizes may differ per pair; they are checked across ranks first.
  virtual void alltoall(const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                        const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes,
                        c10::ScalarType dtype) = 0;
};

}  // namespace torch_neuronx::dist
