#include "distributed/onehost/EagerCollectives.h"

#include <cstring>

#include "distributed/onehost/ShmCollectives.h"

namespace torch_neuronx::dist {
namespace {

// memcpy for the calls of empty tensors too, whose buffers may be null
// (memcpy's pointers must not be, even for 0 bytes).
void copy_bytes(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

// out = the ranks' buffers at `offset`, reduced in rank order (the chunked
// form's order too, so every rank gets the same bits), then averaged.
void reduce_published(ShmCollectives& shm, char* out, size_t offset, const HostCall& c) {
  const size_t bytes = bytes_of(c);
  if (bytes == 0) return;  // a barrier's empty call: out may be null
  copy_bytes(out, shm.eager_data(0) + offset, bytes);
  for (int r = 1; r < shm.group().world(); ++r)
    reduce_into(out, shm.eager_data(r) + offset, c.numel, c.dtype, c.spec.op);
  if (c.spec.average) scale(out, c.numel, c.dtype, shm.group().world(), /*divide=*/true);
}

// Publishes `bytes` from `in`, premultiplied when the spec says so.
void publish(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c, const char* in, size_t bytes,
             size_t numel) {
  shm.check_signature_eager(def, def.signature(c), bytes, [&](char* buf) {
    if (bytes == 0) return;  // in may be null
    copy_bytes(buf, in, bytes);
    if (c.spec.premul != 1.0) scale(buf, numel, c.dtype, c.spec.premul, /*divide=*/false);
  });
}

}  // namespace

bool eager_allreduce(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  if (bytes_of(c) > shm.eager_limit()) return false;
  publish(shm, def, c, c.out, bytes_of(c), c.numel);
  reduce_published(shm, c.out, 0, c);
  return true;
}

bool eager_reduce_scatter(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  const int world = shm.group().world();
  if (bytes_of(c) * world > shm.eager_limit()) return false;
  publish(shm, def, c, c.in, bytes_of(c) * world, c.numel * world);
  reduce_published(shm, c.out, shm.group().rank() * bytes_of(c), c);
  return true;
}

bool eager_broadcast(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  if (bytes_of(c) > shm.eager_limit()) return false;
  const bool root = shm.group().rank() == c.root;
  shm.check_signature_eager(def, def.signature(c), root ? bytes_of(c) : 0, [&](char* buf) {
    if (root) copy_bytes(buf, c.out, bytes_of(c));
  });
  if (!root) copy_bytes(c.out, shm.eager_data(c.root), bytes_of(c));
  return true;
}

bool eager_allgather(ShmCollectives& shm, const CollectiveDef& def, const HostCall& c) {
  if (bytes_of(c) > shm.eager_limit()) return false;
  shm.check_signature_eager(def, def.signature(c), bytes_of(c), [&](char* buf) { copy_bytes(buf, c.in, bytes_of(c)); });
  for (int r = 0; r < shm.group().world(); ++r) copy_bytes(c.out + r * bytes_of(c), shm.eager_data(r), bytes_of(c));
  return true;
}

}  // namespace torch_neuronx::dist
