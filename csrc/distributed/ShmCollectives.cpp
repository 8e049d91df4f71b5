#include "distributed/ShmCollectives.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace torch_neuronx::dist {
namespace {

const char* name_of(uint32_t op) {
  switch (static_cast<Collective>(op)) {
    case Collective::kBarrier: return "barrier";
    case Collective::kAllreduce: return "allreduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kAllgather: return "allgather";
    case Collective::kReduceScatter: return "reduce_scatter";
  }
  return "unknown collective";
}

std::string describe_call(const CallSignature& s) {
  std::ostringstream o;
  o << name_of(s.op) << " of " << s.numel << " x " << c10::toString(static_cast<c10::ScalarType>(s.dtype));
  if (s.root >= 0) o << " (root/op " << s.root << ")";
  return o.str();
}

// Splits n elements into world parts of whole cache lines.
size_t part_size(size_t n, int world, size_t elem) {
  const size_t per_line = std::max<size_t>(1, 64 / elem);
  size_t part = (n + world - 1) / world;
  return (part + per_line - 1) / per_line * per_line;
}

}  // namespace

ShmCollectives::ShmCollectives(std::unique_ptr<ShmGroup> group, std::string group_name,
                               std::chrono::milliseconds timeout)
    : group_(std::move(group)), group_name_(std::move(group_name)), timeout_(timeout) {}

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

void ShmCollectives::check_signature(const char* what, const CallSignature& mine) {
  group_->publish_signature(mine);
  step(what);
  for (int r = 0; r < group_->world(); ++r) {
    CallSignature other = group_->signature(r);
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

void ShmCollectives::barrier() {
  check_signature("barrier", {static_cast<uint32_t>(Collective::kBarrier), -1, 0, -1});
}

void ShmCollectives::allreduce(void* data, size_t numel, c10::ScalarType dtype, const ReduceSpec& spec) {
  check_signature("allreduce", {static_cast<uint32_t>(Collective::kAllreduce), static_cast<int32_t>(dtype),
                                static_cast<int64_t>(numel), spec.code});
  const size_t elem = c10::elementSize(dtype);
  const int world = group_->world(), me = group_->rank();
  const size_t chunk = group_->slot_bytes() / elem;
  char* bytes = static_cast<char*>(data);
  if (spec.premul != 1.0) scale(data, numel, dtype, spec.premul, /*divide=*/false);
  for (size_t off = 0; off < numel; off += chunk) {
    const size_t m = std::min(chunk, numel - off);
    char* out = bytes + off * elem;
    std::memcpy(group_->slot(me), out, m * elem);
    step("allreduce");
    const size_t part = part_size(m, world, elem);
    const size_t lo = std::min(m, me * part), hi = std::min(m, lo + part);
    if (lo < hi) {
      char* mine = out + lo * elem;
      std::memcpy(mine, group_->slot(0) + lo * elem, (hi - lo) * elem);
      for (int r = 1; r < world; ++r) reduce_into(mine, group_->slot(r) + lo * elem, hi - lo, dtype, spec.op);
      if (spec.average) scale(mine, hi - lo, dtype, world, /*divide=*/true);
      std::memcpy(group_->slot(me) + lo * elem, mine, (hi - lo) * elem);
    }
    step("allreduce");
    for (int r = 0; r < world; ++r) {
      const size_t rlo = std::min(m, r * part), rhi = std::min(m, rlo + part);
      if (r != me && rlo < rhi) std::memcpy(out + rlo * elem, group_->slot(r) + rlo * elem, (rhi - rlo) * elem);
    }
    step("allreduce");
  }
}

void ShmCollectives::broadcast(void* data, size_t numel, c10::ScalarType dtype, int root) {
  check_signature("broadcast", {static_cast<uint32_t>(Collective::kBroadcast), static_cast<int32_t>(dtype),
                                static_cast<int64_t>(numel), root});
  const size_t total = numel * c10::elementSize(dtype), chunk = group_->slot_bytes();
  char* bytes = static_cast<char*>(data);
  for (size_t off = 0; off < total; off += chunk) {
    const size_t m = std::min(chunk, total - off);
    if (group_->rank() == root) std::memcpy(group_->slot(root), bytes + off, m);
    step("broadcast");
    if (group_->rank() != root) std::memcpy(bytes + off, group_->slot(root), m);
    step("broadcast");
  }
}

void ShmCollectives::allgather(const void* in, void* out, size_t numel, c10::ScalarType dtype) {
  check_signature("allgather", {static_cast<uint32_t>(Collective::kAllgather), static_cast<int32_t>(dtype),
                                static_cast<int64_t>(numel), -1});
  const size_t total = numel * c10::elementSize(dtype), chunk = group_->slot_bytes();
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  for (size_t off = 0; off < total; off += chunk) {
    const size_t m = std::min(chunk, total - off);
    std::memcpy(group_->slot(group_->rank()), src + off, m);
    step("allgather");
    for (int r = 0; r < group_->world(); ++r) std::memcpy(dst + r * total + off, group_->slot(r), m);
    step("allgather");
  }
}

void ShmCollectives::reduce_scatter(const void* in, void* out, size_t numel, c10::ScalarType dtype,
                                    const ReduceSpec& spec) {
  check_signature("reduce_scatter", {static_cast<uint32_t>(Collective::kReduceScatter),
                                     static_cast<int32_t>(dtype), static_cast<int64_t>(numel), spec.code});
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
    step("reduce_scatter");
    char* mine = dst + off * elem;
    std::memcpy(mine, group_->slot(0) + me * m * elem, m * elem);
    for (int r = 1; r < world; ++r) reduce_into(mine, group_->slot(r) + me * m * elem, m, dtype, spec.op);
    if (spec.average) scale(mine, m, dtype, world, /*divide=*/true);
    step("reduce_scatter");
  }
}

}  // namespace torch_neuronx::dist
