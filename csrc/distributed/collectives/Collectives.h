// The table of collectives: each one is declared once, as a CollectiveDef
// (name, argument check, the signature every rank must agree on, and one
// implementation per transport), and the process group, both transports and
// the mismatch check pick it up from there. Adding one: docs/architecture.md.
//
// A collective runs on host bytes (HostCall: runtime/NeuronHostAccess.h gives
// the process group device bytes, or staged copies of them). Before any data
// moves, the ranks of each host compare signatures; a mismatch raises on every
// rank, naming both calls.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/collectives/CallSignature.h"
#include "distributed/collectives/DistError.h"
#include "distributed/collectives/Reductions.h"
#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

class ShmCollectives;
class MultiHostCollectives;

// How an allreduce / reduce-scatter finishes: plain, AVG (divide by the
// world size) or PREMUL_SUM (inputs multiplied by a factor first).
struct ReduceSpec {
  Reduce op = Reduce::kSum;
  bool average = false;
  double premul = 1.0;
  int64_t code = 0;  // the c10d ReduceOp, for the cross-rank check
};

// One call's host bytes and parameters. Which fields a collective reads is
// its own contract (written beside each entry in Collectives.cpp).
struct HostCall {
  c10::ScalarType dtype = c10::kByte;
  size_t numel = 0;          // elements of one rank's part
  ReduceSpec spec;           // reductions
  int root = -1;             // rooted collectives
  const char* in = nullptr;  // input bytes (== out for in-place collectives)
  char* out = nullptr;       // output bytes
  // Per-peer parts (all-to-all): send[d] goes to rank d, recv[s] comes from s.
  std::vector<const char*> send;
  std::vector<char*> recv;
  std::vector<size_t> send_bytes, recv_bytes;
};

// Bytes of one rank's part of a call.
inline size_t bytes_of(const HostCall& c) { return c.numel * c10::elementSize(c.dtype); }

struct CollectiveDef {
  const char* name;  // in errors and mismatch messages
  // Throws a c10 error naming the bad value, on the calling thread, before the
  // call is queued (may be null).
  void (*check)(const CollectiveDef& def, const HostCall& call, int world);
  // What every rank must pass alike (op is filled in from the table).
  CallSignature (*signature)(const HostCall& call);
  // The transports: every rank on one host (shared memory), or ranks on
  // several hosts (shared memory within each, Gloo between them).
  void (*on_one_host)(ShmCollectives& shm, const HostCall& call);
  void (*across_hosts)(MultiHostCollectives& hosts, const HostCall& call);
  // Optional, on one host: the whole call, signature check included, in one
  // meeting of the ranks (EagerCollectives.h); false when it does not fit.
  bool (*eager)(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call) = nullptr;
  // Optional, on one host, for calls eager does not take: the whole call
  // reading the peers' buffers in place (DirectCollectives.h); false when it
  // does not apply.
  bool (*direct)(ShmCollectives& shm, const CollectiveDef& def, const HostCall& call) = nullptr;
  uint32_t id = 0;  // set by register_collective: a hash of the name
};

// Adds def to the table (it lives for the process); throws if its name or id
// is taken. Every rank registers the same entries.
TORCH_NEURONX_API const CollectiveDef& register_collective(CollectiveDef def);
// The entry with this name; throws naming it when there is none.
TORCH_NEURONX_API const CollectiveDef& find_collective(const std::string& name);
// The name of the entry with this id ("unknown collective <id>" if none).
TORCH_NEURONX_API std::string collective_name(uint32_t id);

// Runs one call on this rank: the signature check among the ranks of this
// host, then the transport's implementation (across hosts when `hosts` is
// set). Throws DistError naming what went wrong.
TORCH_NEURONX_API void run_collective(const CollectiveDef& def, const HostCall& call, ShmCollectives& host,
                                      MultiHostCollectives* hosts);

// The built-in entries (Collectives.cpp).
extern TORCH_NEURONX_API const CollectiveDef& kBarrier;
extern TORCH_NEURONX_API const CollectiveDef& kAllreduce;      // in place: out; numel; spec
extern TORCH_NEURONX_API const CollectiveDef& kBroadcast;      // in place: out; numel; root
extern TORCH_NEURONX_API const CollectiveDef& kAllgather;      // in: numel; out: world x numel
extern TORCH_NEURONX_API const CollectiveDef& kReduceScatter;  // in: world x numel; out: numel; spec
extern TORCH_NEURONX_API const CollectiveDef& kReduce;    // in place: out; numel; spec; root (others' out unchanged)
extern TORCH_NEURONX_API const CollectiveDef& kGather;    // in: numel; out (root): world x numel; root
extern TORCH_NEURONX_API const CollectiveDef& kScatter;   // in (root): world x numel; out: numel; root
extern TORCH_NEURONX_API const CollectiveDef& kAlltoall;  // send/recv parts; dtype

}  // namespace torch_neuronx::dist
