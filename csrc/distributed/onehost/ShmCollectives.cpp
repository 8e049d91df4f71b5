#include "distributed/onehost/ShmCollectives.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace torch_neuronx::dist {
namespace {

std::string describe_call(const CallSignature& s) {
  std::ostringstream o;
  o << collective_name(s.op) << " of " << s.numel << " x " << c10::toString(static_cast<c10::ScalarType>(s.dtype));
  if (s.root >= 0) o << " (root/op " << s.root << ")";
  return o.str();
}

}  // namespace

size_t part_size(size_t n, int world, size_t elem) {
  const size_t per_line = std::max<size_t>(1, 64 / elem);
  size_t part = (n + world - 1) / world;
  return (part + per_line - 1) / per_line * per_line;
}

ShmCollectives::ShmCollectives(std::unique_ptr<ShmGroup> group, std::string group_name,
                               std::chrono::milliseconds timeout)
    : group_(std::move(group)),
      group_name_(std::move(group_name)),
      timeout_(timeout),
      peer_mappings_(std::make_unique<PeerMappings>()) {}

ShmCollectives::~ShmCollectives() = default;

std::string ShmCollectives::describe(const char* what) const {
  return std::string("neuron process group '") + group_name_ + "', " + what;
}

void ShmCollectives::step(const char* what) {
  ++phase_;
  group_->arrive(phase_);
  group_->wait_all(phase_, describe(what), timeout_);
}

void ShmCollectives::wait_for_all_ranks(const std::string& what) {
  group_->arrive(phase_);
  group_->wait_all(phase_, describe(what.c_str()), timeout_);
}

size_t ShmCollectives::eager_limit() const { return std::min(kEagerBytes, group_->slot_bytes() / 2); }

// Call k's eager buffer is half k % 2 of each rank's slot. Chunked
// collectives use whole slots only after their own check, when every rank
// has finished reading the previous call's.
const char* ShmCollectives::eager_data(int r) const {
  return group_->slot(r) + (calls_ % 2) * (group_->slot_bytes() / 2);
}

void ShmCollectives::check_signature_eager(const CollectiveDef& def, CallSignature mine, size_t bytes,
                                           const std::function<void(char*)>& fill) {
  TORCH_INTERNAL_ASSERT(bytes <= eager_limit(), def.name, ": ", bytes, " bytes exceed the eager buffer");
  fill(group_->slot(group_->rank()) + ((calls_ + 1) % 2) * (group_->slot_bytes() / 2));
  check_signature(def, mine);
}

void ShmCollectives::check_signature(const CollectiveDef& def, CallSignature mine) {
  const char* what = def.name;
  mine.op = def.id;
  const uint64_t call = ++calls_;
  group_->publish_signature(call, mine);
  step(what);
  for (int r = 0; r < group_->world(); ++r) {
    CallSignature other = group_->signature(call, r);
    if (other.op != mine.op || other.dtype != mine.dtype || other.numel != mine.numel || other.root != mine.root) {
      std::ostringstream o;
      o << describe(what) << ": ranks disagree on the call: rank " << group_->rank() << " called "
        << describe_call(mine) << ", rank " << r << " called " << describe_call(other)
        << " (every rank must call the same collective with the same dtype and sizes)";
      step(what);  // every rank reaches this point: keep the phases in step
      throw DistError(o.str());
    }
  }
}

// Per chunk: every rank copies (and premultiplies) into its slot the parts the
// other ranks reduce; rank r reduces part r, in rank order, reading its own
// data in place and the others' from their slots, and writes the result to
// part r of its slot (and of its data if it receives); then the receivers
// (every rank, or `root`) copy the other parts out. Non-receivers' data is
// left as it was. Without a premultiplier a rank's own part is never copied.
void ShmCollectives::reduce_chunks(const char* what, void* data, size_t numel, c10::ScalarType dtype,
                                   const ReduceSpec& spec, int root) {
  const size_t elem = c10::elementSize(dtype);
  const int world = group_->world(), me = group_->rank();
  const size_t chunk = group_->slot_bytes() / elem;
  const bool receives = root < 0 || root == me;
  const bool premul = spec.premul != 1.0;
  char* bytes = static_cast<char*>(data);
  for (size_t off = 0; off < numel; off += chunk) {
    const size_t m = std::min(chunk, numel - off);
    char* out = bytes + off * elem;
    char* slot = group_->slot(me);
    const size_t part = part_size(m, world, elem);
    auto range = [&](int r) {
      const size_t lo = std::min(m, r * part);
      return std::make_pair(lo, std::min(m, lo + part));
    };
    const auto [lo, hi] = range(me);
    if (premul) {
      std::memcpy(slot, out, m * elem);
      scale(slot, m, dtype, spec.premul, /*divide=*/false);
    } else {
      if (lo > 0) std::memcpy(slot, out, lo * elem);
      if (hi < m) std::memcpy(slot + hi * elem, out + hi * elem, (m - hi) * elem);
    }
    step(what);
    if (lo < hi) {
      // Rank r's contribution to my part: my own data in place, the others' slots.
      auto source = [&](int r) -> const char* { return (r == me && !premul ? out : group_->slot(r)) + lo * elem; };
      // Accumulate in my slot's own part, which nobody reads until the next
      // step (with a premultiplier it holds my input: use scratch then).
      if (premul) scratch_.resize((hi - lo) * elem);
      char* mine = premul ? scratch_.data() : slot + lo * elem;
      std::memcpy(mine, source(0), (hi - lo) * elem);
      for (int r = 1; r < world; ++r) reduce_into(mine, source(r), hi - lo, dtype, spec.op);
      if (spec.average) scale(mine, hi - lo, dtype, world, /*divide=*/true);
      if (premul) std::memcpy(slot + lo * elem, mine, (hi - lo) * elem);
      if (receives) std::memcpy(out + lo * elem, mine, (hi - lo) * elem);
    }
    step(what);
    if (receives) {
      for (int r = 0; r < world; ++r) {
        const auto [rlo, rhi] = range(r);
        if (r != me && rlo < rhi) std::memcpy(out + rlo * elem, group_->slot(r) + rlo * elem, (rhi - rlo) * elem);
      }
    }
    step(what);
  }
}

void ShmCollectives::broadcast_chunks(const char* what, void* data, size_t total, int root) {
  const size_t chunk = group_->slot_bytes();
  char* bytes = static_cast<char*>(data);
  for (size_t off = 0; off < total; off += chunk) {
    const size_t m = std::min(chunk, total - off);
    if (group_->rank() == root) std::memcpy(group_->slot(root), bytes + off, m);
    step(what);
    if (group_->rank() != root) std::memcpy(bytes + off, group_->slot(root), m);
    step(what);
  }
}

void ShmCollectives::gather_chunks(const char* what, const void* in, void* out, size_t total, int root) {
  const size_t chunk = group_->slot_bytes();
  const bool receives = root < 0 || root == group_->rank();
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  for (size_t off = 0; off < total; off += chunk) {
    const size_t m = std::min(chunk, total - off);
    std::memcpy(group_->slot(group_->rank()), src + off, m);
    step(what);
    if (receives) {
      for (int r = 0; r < group_->world(); ++r) std::memcpy(dst + r * total + off, group_->slot(r), m);
    }
    step(what);
  }
}

void ShmCollectives::scatter_chunks(const char* what, const void* in, void* out, size_t total, int root) {
  const size_t chunk = group_->slot_bytes();
  const int world = group_->world(), me = group_->rank();
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  for (size_t off = 0; off < total; off += chunk) {
    const size_t m = std::min(chunk, total - off);
    if (me == root) {
      for (int r = 0; r < world; ++r) std::memcpy(group_->slot(r), src + r * total + off, m);
    }
    step(what);
    std::memcpy(dst + off, group_->slot(me), m);
    step(what);
  }
}

// Sizes first: every rank publishes what it sends to and expects from each
// peer, and every rank checks the whole matrix (so all raise together). Then
// rounds: rank s puts up to `sub` bytes for each peer d at slot(s) + d * sub.
void ShmCollectives::alltoall_chunks(const char* what, const std::vector<const char*>& send,
                                     const std::vector<size_t>& send_bytes, const std::vector<char*>& recv,
                                     const std::vector<size_t>& recv_bytes) {
  const int world = group_->world(), me = group_->rank();
  auto* sizes = reinterpret_cast<uint64_t*>(group_->slot(me));
  for (int d = 0; d < world; ++d) sizes[d] = send_bytes[d], sizes[world + d] = recv_bytes[d];
  step(what);
  size_t largest = 0;
  std::ostringstream bad;
  for (int s = 0; s < world; ++s) {
    const auto* from = reinterpret_cast<const uint64_t*>(group_->slot(s));
    for (int d = 0; d < world; ++d) {
      const auto* to = reinterpret_cast<const uint64_t*>(group_->slot(d));
      largest = std::max<size_t>(largest, from[d]);
      if (from[d] != to[world + s] && bad.tellp() == 0) {
        bad << "rank " << s << " sends " << from[d] << " bytes to rank " << d << ", which expects " << to[world + s];
      }
    }
  }
  step(what);  // every rank read the sizes
  if (bad.tellp() > 0) {
    throw DistError(describe(what) + ": split sizes disagree across ranks: " + bad.str() +
                    " (input_split_sizes on each rank must equal the output_split_sizes its peers give for it)");
  }
  const size_t sub = group_->slot_bytes() / world / 64 * 64;
  for (size_t off = 0; off < largest; off += sub) {
    char* slot = group_->slot(me);
    for (int d = 0; d < world; ++d) {
      if (off < send_bytes[d]) std::memcpy(slot + d * sub, send[d] + off, std::min(sub, send_bytes[d] - off));
    }
    step(what);
    for (int s = 0; s < world; ++s) {
      if (off < recv_bytes[s]) {
        std::memcpy(recv[s] + off, group_->slot(s) + me * sub, std::min(sub, recv_bytes[s] - off));
      }
    }
    step(what);
  }
}

void ShmCollectives::reduce_scatter_chunks(const char* what, const void* in, void* out, size_t numel,
                                           c10::ScalarType dtype, const ReduceSpec& spec) {
  const size_t elem = c10::elementSize(dtype);
  const int world = group_->world(), me = group_->rank();
  const size_t chunk = group_->slot_bytes() / elem / world;
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  for (size_t off = 0; off < numel; off += chunk) {
    const size_t m = std::min(chunk, numel - off);
    char* slot = group_->slot(me);
    for (int j = 0; j < world; ++j) std::memcpy(slot + j * m * elem, src + (j * numel + off) * elem, m * elem);
    if (spec.premul != 1.0) scale(slot, world * m, dtype, spec.premul, /*divide=*/false);
    step(what);
    char* mine = dst + off * elem;
    std::memcpy(mine, group_->slot(0) + me * m * elem, m * elem);
    for (int r = 1; r < world; ++r) reduce_into(mine, group_->slot(r) + me * m * elem, m, dtype, spec.op);
    if (spec.average) scale(mine, m, dtype, world, /*divide=*/true);
    step(what);
  }
}

}  // namespace torch_neuronx::dist
