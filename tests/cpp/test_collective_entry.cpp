// A test-only entry of the collective table, "test_weighted_sum": every rank
// receives sum over ranks r of (r + 1) * in_r, float32. Registered when this
// library loads; it uses only what a built-in entry uses.
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "distributed/collectives/Collectives.h"
#include "distributed/multihost/MultiHostCollectives.h"
#include "distributed/onehost/ShmCollectives.h"

namespace {

using namespace torch_neuronx::dist;

void weighted_sum_one_host(ShmCollectives& shm, const HostCall& c) {
  ShmGroup& g = shm.group();
  const size_t chunk = g.slot_bytes() / sizeof(float);
  const auto* in = reinterpret_cast<const float*>(c.in);
  auto* out = reinterpret_cast<float*>(c.out);
  for (size_t off = 0; off < c.numel; off += chunk) {
    const size_t m = std::min(chunk, c.numel - off);
    auto* mine = reinterpret_cast<float*>(g.slot(g.rank()));
    for (size_t i = 0; i < m; ++i) mine[i] = static_cast<float>(g.rank() + 1) * in[off + i];
    shm.step("test_weighted_sum");
    std::vector<float> sum(m, 0.0f);
    for (int r = 0; r < g.world(); ++r) {
      const auto* part = reinterpret_cast<const float*>(g.slot(r));
      for (size_t i = 0; i < m; ++i) sum[i] += part[i];
    }
    shm.step("test_weighted_sum");
    std::memcpy(out + off, sum.data(), m * sizeof(float));
  }
}

void weighted_sum_across_hosts(MultiHostCollectives& hosts, const HostCall& c) {
  std::vector<float> all(c.numel * hosts.world_size());
  hosts.allgather(c.in, all.data(), c.numel, c10::kFloat);
  auto* out = reinterpret_cast<float*>(c.out);
  for (size_t i = 0; i < c.numel; ++i) {
    float s = 0.0f;
    for (int r = 0; r < hosts.world_size(); ++r) s += static_cast<float>(r + 1) * all[r * c.numel + i];
    out[i] = s;
  }
}

[[maybe_unused]] const CollectiveDef& kWeightedSum =
    register_collective({"test_weighted_sum",
                         [](const CollectiveDef& def, const HostCall& c, int) {
                           TORCH_CHECK(c.dtype == c10::kFloat, def.name, ": takes float32 tensors, got ", c.dtype);
                         },
                         [](const HostCall& c) {
                           return CallSignature{0, static_cast<int32_t>(c.dtype), static_cast<int64_t>(c.numel), -1};
                         },
                         weighted_sum_one_host, weighted_sum_across_hosts});

}  // namespace
