// The caching allocator over the emulator: reuse, rounding, splitting and
// merging, statistics, stream-aware reuse, OOM and recovery. Run with
// TORCH_NEURONX_EMU_HBM=64M so capacity limits are reachable.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronStream.h"

using torch_neuronx::caching_allocator;

namespace {

constexpr size_t kAgg = 0;

int64_t allocated() { return caching_allocator().getDeviceStats(0).allocated_bytes[kAgg].current; }
int64_t reserved() { return caching_allocator().getDeviceStats(0).reserved_bytes[kAgg].current; }

class Allocator : public ::testing::Test {
 protected:
  void SetUp() override { caching_allocator().emptyCache(); }
  void TearDown() override { caching_allocator().emptyCache(); }
};

TEST_F(Allocator, FreedBlockIsReused) {
  void* first;
  {
    c10::DataPtr p = caching_allocator().allocate(1000);
    first = p.get();
    EXPECT_EQ(allocated(), 1024);    // rounded to 512 bytes
    EXPECT_EQ(reserved(), 2 << 20);  // one small segment
  }
  EXPECT_EQ(allocated(), 0);
  EXPECT_EQ(reserved(), 2 << 20);  // kept in the cache
  c10::DataPtr again = caching_allocator().allocate(1000);
  EXPECT_EQ(again.get(), first);
}

TEST_F(Allocator, SplitBlocksMergeAndRelease) {
  {
    c10::DataPtr a = caching_allocator().allocate(4096);
    c10::DataPtr b = caching_allocator().allocate(4096);
    EXPECT_EQ(static_cast<char*>(b.get()) - static_cast<char*>(a.get()), 4096);  // same segment
    EXPECT_EQ(reserved(), 2 << 20);
  }
  auto stats = caching_allocator().getDeviceStats(0);
  EXPECT_EQ(stats.inactive_split[kAgg].current, 0);  // merged back into one block
  caching_allocator().emptyCache();
  EXPECT_EQ(reserved(), 0);
}

// Freed small blocks wait unmerged for an allocation of the same size; one
// of another size takes them merged rather than growing the cache, and the
// statistics see them free.
TEST_F(Allocator, RecentlyFreedBlocksServeAlikeAndMergeWhenNeeded) {
  std::vector<void*> ptrs;
  {
    std::vector<c10::DataPtr> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(caching_allocator().allocate(256 << 10));  // 2 MiB: the segment
    for (auto& b : blocks) ptrs.push_back(b.get());
  }
  auto stats = caching_allocator().getDeviceStats(0);
  EXPECT_EQ(stats.active_bytes[kAgg].current, 0);
  EXPECT_EQ(stats.inactive_split[kAgg].current, 0);  // stats() merged them
  {
    c10::DataPtr same = caching_allocator().allocate(256 << 10);
    EXPECT_NE(std::find(ptrs.begin(), ptrs.end(), same.get()), ptrs.end());
  }
  {
    // Freed again (unmerged), then a request no recent block fits: it gets
    // the merged segment, not a new one.
    std::vector<c10::DataPtr> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(caching_allocator().allocate(256 << 10));
  }
  c10::DataPtr big = caching_allocator().allocate(1 << 20);
  EXPECT_EQ(reserved(), 2 << 20);
  EXPECT_EQ(big.get(), ptrs.front());
}

TEST_F(Allocator, LargeRequestsRoundToTwoMiB) {
  c10::DataPtr p = caching_allocator().allocate(3 << 20);
  EXPECT_EQ(reserved(), 4 << 20);
  // A remainder of at most 1 MiB is not split off: the block holds it all.
  EXPECT_EQ(allocated(), 4 << 20);
  EXPECT_EQ(caching_allocator().getDeviceStats(0).requested_bytes[kAgg].current, 3 << 20);
  c10::DataPtr big = caching_allocator().allocate(5 << 20);  // 6 MiB segment, 1 MiB left: unsplit
  c10::DataPtr huge = caching_allocator().allocate(9 << 20);
  EXPECT_EQ(reserved(), (4 + 6 + 10) << 20);
}

TEST_F(Allocator, ZeroBytesGiveNull) {
  c10::DataPtr p = caching_allocator().allocate(0);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.device().type(), c10::DeviceType::PrivateUse1);
}

TEST_F(Allocator, BlocksAreNotSharedAcrossStreams) {
  c10::Stream other = torch_neuronx::stream_from_pool(0, false);
  void* on_default;
  {
    c10::DataPtr p = caching_allocator().allocate(1000);
    on_default = p.get();
  }
  c10::Stream prev = torch_neuronx::exchange_stream(other);
  c10::DataPtr q = caching_allocator().allocate(1000);
  EXPECT_NE(q.get(), on_default);
  torch_neuronx::exchange_stream(prev);
}

TEST_F(Allocator, RecordedStreamDelaysReuseUntilItPasses) {
  c10::Stream other = torch_neuronx::stream_from_pool(0, true);
  void* ptr;
  {
    c10::DataPtr p = caching_allocator().allocate(1000);
    ptr = p.get();
    caching_allocator().recordStream(p, other);
  }
  torch_neuronx::synchronize_stream(other);  // the other stream is past the free
  c10::DataPtr q = caching_allocator().allocate(1000);
  EXPECT_EQ(q.get(), ptr);
}

TEST_F(Allocator, OutOfMemoryThenRecovers) {
  auto info = caching_allocator().getMemoryInfo(0);
  EXPECT_LE(info.second, size_t(64) << 20) << "run with TORCH_NEURONX_EMU_HBM=64M";
  std::vector<c10::DataPtr> held;
  held.push_back(caching_allocator().allocate(40 << 20));
  try {
    caching_allocator().allocate(40 << 20);
    FAIL() << "expected OutOfMemoryError";
  } catch (const c10::OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("neuron:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("40.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("64.00 MiB"), std::string::npos) << msg;
  }
  held.clear();
  c10::DataPtr ok = caching_allocator().allocate(40 << 20);  // freed memory is usable again
  EXPECT_NE(ok.get(), nullptr);
  EXPECT_EQ(caching_allocator().getDeviceStats(0).num_ooms, 1);
}

TEST_F(Allocator, CachedSegmentsAreReleasedBeforeOom) {
  {
    c10::DataPtr a = caching_allocator().allocate(40 << 20);
  }
  EXPECT_EQ(reserved(), 40 << 20);                          // cached
  c10::DataPtr b = caching_allocator().allocate(50 << 20);  // fits only after release
  EXPECT_EQ(reserved(), 50 << 20);
}

TEST_F(Allocator, ThousandCyclesDoNotGrow) {
  for (int i = 0; i < 1000; ++i) {
    c10::DataPtr p = caching_allocator().allocate(static_cast<size_t>(1 + i % 7) << 16);
  }
  EXPECT_EQ(allocated(), 0);
  EXPECT_LE(reserved(), 2 << 20);
}

TEST_F(Allocator, ThreadsAllocateConcurrently) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 500; ++i) {
        c10::DataPtr p = caching_allocator().allocate(static_cast<size_t>(512 * (1 + i % 9)));
        static_cast<char*>(p.get())[0] = 1;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(allocated(), 0);
}

TEST_F(Allocator, RawDeleterFreesByPointer) {
  void* raw = caching_allocator().raw_allocate(2048);
  EXPECT_EQ(allocated(), 2048);
  caching_allocator().raw_deleter()(raw);
  EXPECT_EQ(allocated(), 0);
}

}  // namespace
