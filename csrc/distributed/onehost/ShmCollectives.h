// Collectives among the ranks of one host over a ShmGroup, on contiguous host
// buffers. No Python, no torch ops on the data path.
#pragma once

#include <c10/core/ScalarType.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/collectives/Collectives.h"
#include "distributed/collectives/Reductions.h"
#include "distributed/onehost/PeerMemory.h"
#include "distributed/onehost/ShmGroup.h"

#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

// Splits n elements into world parts of whole cache lines: rank r reduces
// part r (the slot form and DirectCollectives.cpp alike).
size_t part_size(size_t n, int world, size_t elem);

// The shared-memory transport's building blocks; the entries of the
// collective table (Collectives.cpp) are written with them. Ranks meet at
// numbered phases (step); data moves through the per-rank slots in chunks.
class TORCH_NEURONX_API ShmCollectives {
 public:
  // Calls of at most this many bytes per rank may publish their data with
  // their signature (check_signature_eager) and finish in that one meeting.
  static constexpr size_t kEagerBytes = 64u << 10;

  ShmCollectives(std::unique_ptr<ShmGroup> group, std::string group_name, std::chrono::milliseconds timeout);
  ~ShmCollectives();

  // Phase 1, right after every rank mapped the segment.
  void wait_for_all_ranks(const std::string& what);

  // Publishes this rank's signature for `def` and compares every rank's;
  // a mismatch raises DistError on every rank, naming both calls.
  void check_signature(const CollectiveDef& def, CallSignature mine);

  // check_signature with up to eager_limit() bytes of this rank's data
  // published alongside, for a collective done in that one meeting: `fill`
  // writes `bytes` into the buffer it is given, and after the check
  // eager_data(r) holds rank r's until the next call's check. The buffers
  // alternate by call parity (like the signatures), so a rank may fill call
  // k+1's while a slower one still reads call k's.
  void check_signature_eager(const CollectiveDef& def, CallSignature mine, size_t bytes,
                             const std::function<void(char*)>& fill);
  const char* eager_data(int r) const;
  size_t eager_limit() const;

  // Every rank arrives at the next phase, then waits for all the others.
  void step(const char* what);

  // Reduction of data (numel elements) into every rank's data (root < 0) or
  // root's only: a reduce-scatter (rank r reduces part r, in rank order, so
  // every receiver gets the same bits) and an all-gather.
  void reduce_chunks(const char* what, void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec,
                     int root);
  // in (numel elements per rank) reduced part by part: rank r receives part r.
  void reduce_scatter_chunks(const char* what, const void* in, void* out, size_t numel, c10::ScalarType dtype,
                             const ReduceSpec& spec);
  // Every rank's `bytes` from in, to out at rank * bytes on every rank
  // (root < 0) or root's only.
  void gather_chunks(const char* what, const void* in, void* out, size_t bytes, int root);
  void broadcast_chunks(const char* what, void* data, size_t bytes, int root);
  // root's in holds world x bytes; rank r receives part r.
  void scatter_chunks(const char* what, const void* in, void* out, size_t bytes, int root);
  // Sizes first (checked across ranks), then the parts in rounds.
  void alltoall_chunks(const char* what, const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                       const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes);

  ShmGroup& group() { return *group_; }
  // The peers' buffers this group has mapped (DirectCollectives.cpp).
  PeerMappings& peer_mappings() { return *peer_mappings_; }
  // A buffer for this rank's part while it reduces.
  std::vector<char>& scratch() { return scratch_; }
  std::string describe(const char* what) const;

 private:
  std::unique_ptr<ShmGroup> group_;
  std::string group_name_;
  std::chrono::milliseconds timeout_;
  uint64_t phase_ = 1;
  uint64_t calls_ = 0;         // collectives checked so far (selects the signature buffer)
  std::vector<char> scratch_;  // this rank's part while it reduces
  std::unique_ptr<PeerMappings> peer_mappings_;
};

}  // namespace torch_neuronx::dist
