// The shared-memory collectives with threads as ranks (each thread maps the
// segment as a process would), more ranks than cores: call sequences that end
// with no data step (barrier, empty allreduce) followed at once by another
// collective must never trip the mismatch check, and a real mismatch must
// still raise on every rank.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/collectives/Collectives.h"
#include "distributed/onehost/ShmCollectives.h"

using namespace torch_neuronx::dist;

namespace {

constexpr size_t kSlot = 64 << 10;

// Runs body(rank, collectives) on `world` threads over one fresh segment;
// returns each rank's error text ("" when it finished).
std::vector<std::string> run_ranks(int world, const std::function<void(int, ShmCollectives&)>& body) {
  const std::string name = ShmGroup::unique_name("gtest");
  auto creator = std::make_unique<ShmGroup>(name, 0, world, kSlot, 4096, /*create=*/true);
  std::vector<std::unique_ptr<ShmGroup>> groups;
  groups.push_back(std::move(creator));
  for (int r = 1; r < world; ++r) groups.push_back(std::make_unique<ShmGroup>(name, r, world, kSlot, 4096, false));
  ShmGroup::unlink(name);
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r, group = std::move(groups[r])]() mutable {
      try {
        ShmCollectives coll(std::move(group), "gtest", std::chrono::milliseconds(30000));
        coll.wait_for_all_ranks("init");
        body(r, coll);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

void run(ShmCollectives& coll, const CollectiveDef& def, HostCall call) { run_collective(def, call, coll, nullptr); }

HostCall call_of(const void* in, void* out, size_t numel, c10::ScalarType dtype) {
  HostCall c;
  c.in = static_cast<const char*>(in), c.out = static_cast<char*>(out), c.numel = numel, c.dtype = dtype;
  return c;
}

}  // namespace

TEST(ShmCollectives, BarrierThenAllgatherNeverMismatches) {
  const int world = 4, rounds = 20000;
  std::atomic<int> wrong{0};
  auto errors = run_ranks(world, [&](int rank, ShmCollectives& coll) {
    std::vector<int32_t> out(world);
    for (int i = 0; i < rounds; ++i) {
      run(coll, kBarrier, {});
      const int32_t mine = rank * 100000 + i;
      run(coll, kAllgather, call_of(&mine, out.data(), 1, c10::kInt));
      for (int r = 0; r < world; ++r) wrong += out[r] != r * 100000 + i;
      run(coll, kAllreduce, call_of(nullptr, nullptr, 0, c10::kFloat));  // no data step either
      if (i % 7 == rank) std::this_thread::yield();                      // vary who runs ahead
    }
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ShmCollectives, MismatchStillRaisesOnEveryRank) {
  const int world = 3;
  auto errors = run_ranks(world, [&](int rank, ShmCollectives& coll) {
    run(coll, kBarrier, {});
    float x[4] = {1, 2, 3, 4};
    HostCall c = call_of(x, x, 4, c10::kFloat);
    c.root = 0;
    run(coll, rank == 1 ? kBroadcast : kAllreduce, c);
  });
  for (int r = 0; r < world; ++r) {
    EXPECT_NE(errors[r].find("ranks disagree on the call"), std::string::npos) << "rank " << r << ": " << errors[r];
  }
}
