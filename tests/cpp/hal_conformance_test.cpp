// HAL conformance: the same contract checks run over every built-in driver.
// A driver that cannot pass a check lists it in kSkips with the reason.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "neuron_hal/driver.h"

namespace {

const std::map<std::string, std::map<std::string, std::string>> kSkips = {
    {"null",
     {{"*",
       "the null driver is a skeleton: it has no devices and implements no "
       "memory, stream or event call (only DeviceCount and ReportsUnimplemented run)"}}},
};

class HalConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_EQ(nhal_driver_lookup(GetParam().c_str(), &d_), NHAL_STATUS_OK);
    ASSERT_EQ(nhal_driver_open(GetParam().c_str(), &d_), NHAL_STATUS_OK) << nhal_last_error_message();
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    test = test.substr(0, test.find('/'));
    auto drv = kSkips.find(GetParam());
    if (drv != kSkips.end() && test != "DeviceCount" && test != "ReportsUnimplemented") {
      auto it = drv->second.find(test);
      if (it == drv->second.end()) it = drv->second.find("*");
      if (it != drv->second.end()) GTEST_SKIP() << it->second;
    }
    ASSERT_EQ(d_->device.count(&count_), NHAL_STATUS_OK);
    if (GetParam() != "null") ASSERT_GT(count_, 0);
  }
  const nhal_driver* d_ = nullptr;
  int count_ = 0;
};

TEST_P(HalConformance, DeviceCount) {
  int n = -1;
  EXPECT_EQ(d_->device.count(&n), NHAL_STATUS_OK);
  EXPECT_GE(n, 0);
  EXPECT_EQ(d_->device.count(nullptr), NHAL_STATUS_INVALID_ARGUMENT);
}

TEST_P(HalConformance, ReportsUnimplemented) {
  if (GetParam() != "null") GTEST_SKIP() << "only the null driver answers UNIMPLEMENTED";
  void* p = nullptr;
  EXPECT_EQ(d_->memory.malloc(0, 16, &p), NHAL_STATUS_UNIMPLEMENTED);
  EXPECT_NE(std::string(nhal_last_error_message()).find("memory.malloc"), std::string::npos);
}

TEST_P(HalConformance, PropertiesOfEveryDevice) {
  for (int i = 0; i < count_; ++i) {
    nhal_device_properties p;
    ASSERT_EQ(d_->device.get_properties(i, &p), NHAL_STATUS_OK);
    EXPECT_GT(std::strlen(p.name), 0u);
    EXPECT_GT(p.total_memory, 0u);
  }
}

TEST_P(HalConformance, BadDeviceIndexIsOutOfRange) {
  nhal_device_properties p;
  EXPECT_EQ(d_->device.get_properties(count_, &p), NHAL_STATUS_OUT_OF_RANGE);
  EXPECT_NE(std::string(nhal_last_error_message()).find(std::to_string(count_)), std::string::npos);
  EXPECT_EQ(d_->device.get_properties(-1, &p), NHAL_STATUS_OUT_OF_RANGE);
  void* ptr = nullptr;
  EXPECT_EQ(d_->memory.malloc(count_, 64, &ptr), NHAL_STATUS_OUT_OF_RANGE);
}

TEST_P(HalConformance, MallocIsAccountedAndFreed) {
  uint64_t free0, total, free1, free2;
  ASSERT_EQ(d_->device.get_memory_info(0, &free0, &total), NHAL_STATUS_OK);
  void* p = nullptr;
  ASSERT_EQ(d_->memory.malloc(0, 4 << 20, &p), NHAL_STATUS_OK);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(d_->device.get_memory_info(0, &free1, &total), NHAL_STATUS_OK);
  EXPECT_EQ(free0 - free1, 4u << 20);
  int dev = -1;
  EXPECT_EQ(d_->memory.device_of(static_cast<char*>(p) + 100, &dev), NHAL_STATUS_OK);
  EXPECT_EQ(dev, 0);
  ASSERT_EQ(d_->memory.free(p), NHAL_STATUS_OK);
  ASSERT_EQ(d_->device.get_memory_info(0, &free2, &total), NHAL_STATUS_OK);
  EXPECT_EQ(free2, free0);
  EXPECT_EQ(d_->memory.device_of(p, &dev), NHAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(d_->memory.free(p), NHAL_STATUS_INVALID_ARGUMENT);  // double free
}

// A second mapping of an exported block (what a peer process gets) sees the
// same bytes, and the open count follows export and close.
TEST_P(HalConformance, IpcExportOpenCloseShareBytesAndCount) {
  if (!d_->ipc.export_handle) GTEST_SKIP() << "driver has no IPC table";
  void* p = nullptr;
  ASSERT_EQ(d_->memory.malloc(0, 4 << 20, &p), NHAL_STATUS_OK);
  char* inner = static_cast<char*>(p) + 4096;
  std::memcpy(inner, "neuron", 7);
  nhal_ipc_handle h{};
  ASSERT_EQ(d_->ipc.export_handle(inner, 1, &h), NHAL_STATUS_OK) << nhal_last_error_message();
  EXPECT_EQ(h.size, 4u << 20);
  EXPECT_EQ(h.offset, 4096u);
  int64_t opens = -1;
  ASSERT_EQ(d_->ipc.open_count(p, &opens), NHAL_STATUS_OK);
  EXPECT_EQ(opens, 1);
  nhal_ipc_handle mine;  // a peer gets the handle as bytes
  std::memcpy(&mine, &h, sizeof(h));
  void* base = nullptr;
  ASSERT_EQ(d_->ipc.open_handle(0, &mine, &base), NHAL_STATUS_OK) << nhal_last_error_message();
  EXPECT_NE(base, p);
  EXPECT_STREQ(static_cast<char*>(base) + h.offset, "neuron");
  std::memcpy(static_cast<char*>(base) + h.offset, "Neuron", 7);
  EXPECT_STREQ(inner, "Neuron");
  int dev = -1;
  EXPECT_EQ(d_->memory.device_of(base, &dev), NHAL_STATUS_OK);
  EXPECT_EQ(d_->memory.free(base), NHAL_STATUS_INVALID_ARGUMENT);  // not this process's allocation
  ASSERT_EQ(d_->ipc.close_handle(base, 1), NHAL_STATUS_OK);
  ASSERT_EQ(d_->ipc.open_count(p, &opens), NHAL_STATUS_OK);
  EXPECT_EQ(opens, 0);
  EXPECT_EQ(d_->ipc.close_handle(base, 1), NHAL_STATUS_INVALID_ARGUMENT);  // closed twice
  nhal_ipc_handle bad = h;
  bad.size += 4096;  // does not match the file
  EXPECT_EQ(d_->ipc.open_handle(0, &bad, &base), NHAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nhal_last_error_message()).find("does not match"), std::string::npos);
  nhal_ipc_handle garbage{};
  EXPECT_EQ(d_->ipc.open_handle(0, &garbage, &base), NHAL_STATUS_INVALID_ARGUMENT);
  int on_heap = 0;
  EXPECT_EQ(d_->ipc.export_handle(&on_heap, 0, &h), NHAL_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(d_->ipc.export_handle(inner, 0, &h), NHAL_STATUS_OK);  // a transport's: not counted
  ASSERT_EQ(d_->ipc.open_count(p, &opens), NHAL_STATUS_OK);
  EXPECT_EQ(opens, 0);
  EXPECT_EQ(d_->memory.free(p), NHAL_STATUS_OK);
  // The handle of freed memory opens nothing, even where its descriptor's
  // number now names another file.
  void* other = nullptr;
  ASSERT_EQ(d_->memory.malloc(0, 4 << 20, &other), NHAL_STATUS_OK);
  EXPECT_EQ(d_->ipc.open_handle(0, &h, &base), NHAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nhal_last_error_message()).find("is gone"), std::string::npos);
  EXPECT_EQ(d_->memory.free(other), NHAL_STATUS_OK);
}

TEST_P(HalConformance, ZeroSizeMallocGivesNull) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(d_->memory.malloc(0, 0, &p), NHAL_STATUS_OK);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(d_->memory.free(nullptr), NHAL_STATUS_OK);
}

TEST_P(HalConformance, OverCapacityIsOutOfMemoryWithValues) {
  uint64_t free0, total;
  ASSERT_EQ(d_->device.get_memory_info(0, &free0, &total), NHAL_STATUS_OK);
  void* p = nullptr;
  EXPECT_EQ(d_->memory.malloc(0, total + 1, &p), NHAL_STATUS_OUT_OF_MEMORY);
  std::string msg = nhal_last_error_message();
  EXPECT_NE(msg.find("neuron:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
  uint64_t free1;
  ASSERT_EQ(d_->device.get_memory_info(0, &free1, &total), NHAL_STATUS_OK);
  EXPECT_EQ(free1, free0);                                    // nothing leaked by the failed call
  ASSERT_EQ(d_->memory.malloc(0, 1024, &p), NHAL_STATUS_OK);  // still usable
  EXPECT_EQ(d_->memory.free(p), NHAL_STATUS_OK);
}

TEST_P(HalConformance, CopyRoundTrip) {
  nhal_stream s;
  ASSERT_EQ(d_->stream.create(0, 0, &s), NHAL_STATUS_OK);
  std::vector<int> src(1 << 16), dst(1 << 16, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int>(i * 7);
  void *a = nullptr, *b = nullptr;
  size_t n = src.size() * sizeof(int);
  ASSERT_EQ(d_->memory.malloc(0, n, &a), NHAL_STATUS_OK);
  ASSERT_EQ(d_->memory.malloc(count_ > 1 ? 1 : 0, n, &b), NHAL_STATUS_OK);
  ASSERT_EQ(d_->memory.copy(s, a, src.data(), n, NHAL_COPY_HOST_TO_DEVICE), NHAL_STATUS_OK);
  ASSERT_EQ(d_->memory.copy(s, b, a, n, NHAL_COPY_DEVICE_TO_DEVICE), NHAL_STATUS_OK);
  ASSERT_EQ(d_->memory.copy(s, dst.data(), b, n, NHAL_COPY_DEVICE_TO_HOST), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.synchronize(s), NHAL_STATUS_OK);
  EXPECT_EQ(src, dst);
  EXPECT_EQ(d_->memory.free(a), NHAL_STATUS_OK);
  EXPECT_EQ(d_->memory.free(b), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(s), NHAL_STATUS_OK);
}

void append(void* ud) {
  auto* v = static_cast<std::vector<int>*>(ud);
  v->push_back(static_cast<int>(v->size()));
}

TEST_P(HalConformance, StreamRunsInOrder) {
  nhal_stream s;
  ASSERT_EQ(d_->stream.create(0, 0, &s), NHAL_STATUS_OK);
  std::vector<int> seen;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(d_->stream.launch(s, append, &seen), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.synchronize(s), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.query(s), NHAL_STATUS_OK);
  ASSERT_EQ(seen.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(seen[i], i);
  EXPECT_EQ(d_->stream.destroy(s), NHAL_STATUS_OK);
}

void sleep_then_set(void* ud) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  static_cast<std::atomic<int>*>(ud)->store(1);
}

void read_flag(void* ud) {
  auto* pair = static_cast<std::pair<std::atomic<int>*, int>*>(ud);
  pair->second = pair->first->load();
}

TEST_P(HalConformance, EventOrdersAcrossStreams) {
  nhal_stream producer, consumer;
  ASSERT_EQ(d_->stream.create(0, 0, &producer), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.create(0, -1, &consumer), NHAL_STATUS_OK);
  nhal_event e;
  ASSERT_EQ(d_->event.create(0, &e), NHAL_STATUS_OK);
  EXPECT_EQ(d_->event.query(e), NHAL_STATUS_OK);  // never recorded: complete
  std::atomic<int> flag{0};
  std::pair<std::atomic<int>*, int> observed{&flag, -1};
  ASSERT_EQ(d_->stream.launch(producer, sleep_then_set, &flag), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.record(e, producer), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.stream_wait(consumer, e), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.launch(consumer, read_flag, &observed), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.synchronize(consumer), NHAL_STATUS_OK);
  EXPECT_EQ(observed.second, 1);  // the consumer ran after the producer's work
  EXPECT_EQ(d_->event.synchronize(e), NHAL_STATUS_OK);
  EXPECT_EQ(d_->event.query(e), NHAL_STATUS_OK);
  EXPECT_EQ(d_->event.destroy(e), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(producer), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(consumer), NHAL_STATUS_OK);
}

// Two streams waiting for each other's events, each event destroyed as soon
// as the wait is queued (what torch.Stream.wait_stream does): a stream still
// waiting for a destroyed event must see it complete, never a freed one (in
// thread mode this hung within ten rounds when destroy freed the event).
TEST_P(HalConformance, EventDestroyedWhileAnotherStreamWaitsForIt) {
  nhal_stream a, b;
  ASSERT_EQ(d_->stream.create(0, 0, &a), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.create(0, 0, &b), NHAL_STATUS_OK);
  std::atomic<int> flag{0};
  for (int round = 0; round < 300; ++round) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      nhal_event e;
      ASSERT_EQ(d_->event.create(0, &e), NHAL_STATUS_OK);
      if (round % 50 == 0) ASSERT_EQ(d_->stream.launch(from, sleep_then_set, &flag), NHAL_STATUS_OK);
      ASSERT_EQ(d_->event.record(e, from), NHAL_STATUS_OK);
      ASSERT_EQ(d_->event.stream_wait(to, e), NHAL_STATUS_OK);
      ASSERT_EQ(d_->event.destroy(e), NHAL_STATUS_OK);
    }
  }
  EXPECT_EQ(d_->stream.synchronize(a), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.synchronize(b), NHAL_STATUS_OK);
  EXPECT_EQ(flag.load(), 1);
  EXPECT_EQ(d_->stream.destroy(a), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(b), NHAL_STATUS_OK);
}

TEST_P(HalConformance, EventElapsedTime) {
  nhal_stream s;
  ASSERT_EQ(d_->stream.create(0, 0, &s), NHAL_STATUS_OK);
  nhal_event a, b, untimed;
  ASSERT_EQ(d_->event.create(NHAL_EVENT_ENABLE_TIMING, &a), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.create(NHAL_EVENT_ENABLE_TIMING, &b), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.create(0, &untimed), NHAL_STATUS_OK);
  float ms = -1;
  EXPECT_EQ(d_->event.elapsed_ms(a, b, &ms), NHAL_STATUS_INVALID_ARGUMENT);  // not recorded
  std::atomic<int> flag{0};
  ASSERT_EQ(d_->event.record(a, s), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.launch(s, sleep_then_set, &flag), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.record(b, s), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.record(untimed, s), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.synchronize(b), NHAL_STATUS_OK);
  ASSERT_EQ(d_->event.elapsed_ms(a, b, &ms), NHAL_STATUS_OK);
  EXPECT_GE(ms, 15.0f);
  EXPECT_EQ(d_->event.elapsed_ms(a, untimed, &ms), NHAL_STATUS_INVALID_ARGUMENT);
  for (nhal_event e : {a, b, untimed}) EXPECT_EQ(d_->event.destroy(e), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(s), NHAL_STATUS_OK);
}

TEST_P(HalConformance, DeviceSynchronizeWaitsForAllStreams) {
  nhal_stream s1, s2;
  ASSERT_EQ(d_->stream.create(0, 0, &s1), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.create(0, 0, &s2), NHAL_STATUS_OK);
  std::atomic<int> f1{0}, f2{0};
  ASSERT_EQ(d_->stream.launch(s1, sleep_then_set, &f1), NHAL_STATUS_OK);
  ASSERT_EQ(d_->stream.launch(s2, sleep_then_set, &f2), NHAL_STATUS_OK);
  ASSERT_EQ(d_->device.synchronize(0), NHAL_STATUS_OK);
  EXPECT_EQ(f1.load() + f2.load(), 2);
  EXPECT_EQ(d_->stream.destroy(s1), NHAL_STATUS_OK);
  EXPECT_EQ(d_->stream.destroy(s2), NHAL_STATUS_OK);
}

TEST_P(HalConformance, PinnedHostMemory) {
  void* p = nullptr;
  ASSERT_EQ(d_->memory.host_alloc(1 << 20, &p), NHAL_STATUS_OK);
  ASSERT_NE(p, nullptr);
  if (d_->memory.host_is_pinned) {
    EXPECT_EQ(d_->memory.host_is_pinned(static_cast<char*>(p) + 10), 1);
    int local = 0;
    EXPECT_EQ(d_->memory.host_is_pinned(&local), 0);
  }
  int dev;
  EXPECT_EQ(d_->memory.device_of(p, &dev), NHAL_STATUS_INVALID_ARGUMENT);  // not device memory
  EXPECT_EQ(d_->memory.host_free(p), NHAL_STATUS_OK);
}

TEST_P(HalConformance, ConcurrentAllocationsFromThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        if (d_->memory.malloc(0, 4096 + i, &p) != NHAL_STATUS_OK || d_->memory.free(p) != NHAL_STATUS_OK) {
          failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Drivers, HalConformance, ::testing::Values("emu", "null"),
                         [](const auto& info) { return info.param; });

}  // namespace
