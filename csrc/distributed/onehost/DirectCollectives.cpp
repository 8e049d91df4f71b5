#include "distributed/onehost/DirectCollectives.h"

#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "distributed/onehost/PeerMemory.h"
#include "distributed/onehost/ShmCollectives.h"
#include "runtime/NeuronSettings.h"

namespace torch_neuronx::dist {
namespace {

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> on{env_flag("TORCH_NEURONX_DIRECT_COLLECTIVES", true)};
  return on;
}

bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }

// What a rank publishes with its signature; `mapped` is written after the
// check, once it has mapped every peer's buffer, and read after one more meeting.
struct Published {
  PeerBuffer buffer;
  std::atomic<uint32_t> mapped{0};
};

// The signature check with this rank's buffer published, then every peer's
// buffer mapped. Fills `peers` (this rank's own entry: `mine`) and returns true
// when every rank mapped every buffer; otherwise every rank learns so, and the
// caller runs the slot form (the call is checked already).
bool publish_and_map(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c, const char* mine, size_t bytes,
                     PeerBuffer buffer, std::vector<const char*>& peers) {
  static_assert(sizeof(Published) <= ShmCollectives::kEagerBytes);
  shm.check_signature_eager(def, def.signature(c), sizeof(Published), [&](char* buf) { new (buf) Published{buffer}; });
  const int world = shm.group().world(), me = shm.group().rank();
  auto published = [&](int r) { return reinterpret_cast<Published*>(const_cast<char*>(shm.eager_data(r))); };
  peers.assign(world, nullptr);
  bool ok = true;
  for (int r = 0; r < world; ++r) ok = ok && published(r)->buffer.shareable;
  if (!ok) {  // every rank saw the same; all have read it before the slots are reused
    shm.step(def.name);
    return false;
  }
  for (int r = 0; r < world && ok; ++r) {
    peers[r] = r == me ? mine : shm.peer_mappings().map(published(r)->buffer);
    ok = peers[r] != nullptr;
  }
  published(me)->mapped.store(ok ? 1 : 2, std::memory_order_release);
  shm.step(def.name);
  for (int r = 0; r < world; ++r) ok = ok && published(r)->mapped.load(std::memory_order_acquire) == 1;
  if (!ok) shm.step(def.name);  // every rank has read the flags before the slots are reused
  return ok;
}

bool takes(const ShmCollectives& shm, size_t published_bytes) {
  return enabled() && published_bytes > shm.eager_limit();
}

}  // namespace

void set_direct_collectives(bool on) { enabled_flag().store(on); }

// Rank r reduces part r of every rank's data, in rank order, and writes it to
// its own data (nobody else reads that part of it); then every rank copies
// the other parts from their owners.
bool direct_allreduce(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  if (!takes(shm, bytes_of(c)) || c.spec.code == static_cast<int64_t>(c10d::ReduceOp::PREMUL_SUM)) return false;
  std::vector<const char*> data;
  if (!publish_and_map(shm, def, c, c.out, bytes_of(c), describe_buffer(c.out, bytes_of(c)), data)) {
    def.on_one_host(shm, c);
    return true;
  }
  const int world = shm.group().world(), me = shm.group().rank();
  const size_t elem = c10::elementSize(c.dtype), part = part_size(c.numel, world, elem);
  auto range = [&](int r) {
    const size_t lo = std::min(c.numel, r * part);
    return std::make_pair(lo, std::min(c.numel, lo + part));
  };
  const auto [lo, hi] = range(me);
  if (lo < hi) {
    // In rank order, as the slot form: rank 0 accumulates in its own data; so
    // may rank 1 of 2 for a sum or product (x1 + x0 and x0 + x1 are the same
    // bits); others accumulate aside, then write their part.
    const bool in_place = me == 0 || (world == 2 && (c.spec.op == Reduce::kSum || c.spec.op == Reduce::kProduct));
    const size_t n = hi - lo;
    char* acc = c.out + lo * elem;
    if (!in_place) {
      shm.scratch().resize(n * elem);
      acc = shm.scratch().data();
      std::memcpy(acc, data[0] + lo * elem, n * elem);
    }
    for (int r = 1; r < world; ++r) {
      const int src = in_place && r == me ? 0 : r;  // rank 1 of 2, in place, holds x1: add x0
      reduce_into(acc, data[src] + lo * elem, n, c.dtype, c.spec.op);
    }
    if (c.spec.average) scale(acc, n, c.dtype, world, /*divide=*/true);
    if (!in_place) std::memcpy(c.out + lo * elem, acc, n * elem);
  }
  shm.step(def.name);
  for (int r = 0; r < world; ++r) {
    const auto [rlo, rhi] = range(r);
    if (r != me && rlo < rhi) std::memcpy(c.out + rlo * elem, data[r] + rlo * elem, (rhi - rlo) * elem);
  }
  shm.step(def.name);  // nobody reads a rank's data once it returns
  return true;
}

bool direct_allgather(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  const size_t bytes = bytes_of(c);
  if (!takes(shm, bytes)) return false;
  std::vector<const char*> in;
  if (!publish_and_map(shm, def, c, c.in, bytes, describe_buffer(c.in, bytes), in)) {
    def.on_one_host(shm, c);
    return true;
  }
  for (int r = 0; r < shm.group().world(); ++r) {
    if (c.out + r * bytes != in[r]) std::memcpy(c.out + r * bytes, in[r], bytes);  // in place: own part already there
  }
  shm.step(def.name);
  return true;
}

// Rank r reduces part r of every rank's input into its output. An output
// overlapping the input is published as not shareable (slot form).
bool direct_reduce_scatter(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  const int world = shm.group().world(), me = shm.group().rank();
  const size_t bytes = bytes_of(c);
  if (!takes(shm, bytes * world) || c.spec.code == static_cast<int64_t>(c10d::ReduceOp::PREMUL_SUM)) return false;
  const bool overlaps = c.out < c.in + bytes * world && c.in < c.out + bytes;
  PeerBuffer buffer = overlaps ? PeerBuffer{} : describe_buffer(c.in, bytes * world);
  std::vector<const char*> in;
  if (!publish_and_map(shm, def, c, c.in, bytes * world, buffer, in)) {
    def.on_one_host(shm, c);
    return true;
  }
  std::memcpy(c.out, in[0] + me * bytes, bytes);
  for (int r = 1; r < world; ++r) reduce_into(c.out, in[r] + me * bytes, c.numel, c.dtype, c.spec.op);
  if (c.spec.average) scale(c.out, c.numel, c.dtype, world, /*divide=*/true);
  shm.step(def.name);
  return true;
}

}  // namespace torch_neuronx::dist
