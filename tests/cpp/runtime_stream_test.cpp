// Runtime streams over the HAL: default/current/pool streams, priorities,
// thread-local current stream, validation of foreign ids.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <thread>

#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronStream.h"

using namespace torch_neuronx;

TEST(RuntimeStreams, DefaultIsCurrentUntilChanged) {
  EXPECT_EQ(current_stream(0), default_stream(0));
  EXPECT_EQ(default_stream(0).id(), 0);
}

TEST(RuntimeStreams, PoolsRoundRobinWithPriorities) {
  c10::Stream a = stream_from_pool(0, false), b = stream_from_pool(0, false);
  EXPECT_NE(a, b);
  EXPECT_EQ(stream_priority(a), 0);
  c10::Stream h = stream_from_pool(0, true);
  EXPECT_EQ(stream_priority(h), -1);
  for (int i = 0; i < kStreamPoolSize - 2; ++i) stream_from_pool(0, false);
  EXPECT_EQ(stream_from_pool(0, false), a);  // wrapped around
}

TEST(RuntimeStreams, CurrentStreamIsPerThread) {
  c10::Stream s = stream_from_pool(0, false);
  c10::Stream prev = exchange_stream(s);
  EXPECT_EQ(current_stream(0), s);
  c10::Stream seen_elsewhere = s;
  std::thread([&] { seen_elsewhere = current_stream(0); }).join();
  EXPECT_EQ(seen_elsewhere, default_stream(0));
  exchange_stream(prev);
  EXPECT_EQ(current_stream(0), default_stream(0));
}

TEST(RuntimeStreams, QueryAndSynchronize) {
  c10::Stream s = stream_from_pool(0, false);
  synchronize_stream(s);
  EXPECT_TRUE(query_stream(s));
}

TEST(RuntimeStreams, ForeignIdsAndDevicesAreRejected) {
  c10::Stream bogus(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, 0), 999);
  EXPECT_THROW(hal_stream(bogus), c10::Error);
  c10::Stream far(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, 99), 0);
  try {
    hal_stream(far);
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("neuron:99"), std::string::npos);
  }
}

TEST(RuntimeDevices, CountAndSelection) {
  EXPECT_EQ(device_count(), 4);  // one Trainium2 chip at LNC=2
  set_device(3);
  EXPECT_EQ(current_device(), 3);
  EXPECT_EQ(exchange_device(0), 3);
  EXPECT_THROW(set_device(4), c10::Error);
  EXPECT_EQ(current_device(), 0);
}
