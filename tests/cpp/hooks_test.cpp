// PyTorch-facing hooks and the generator, without Python: device-from-pointer,
// pinned-pointer detection, storage resize, default generators and state.
#include <gtest/gtest.h>

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/StorageImpl.h>

#include "memory/NeuronCachingAllocator.h"
#include "memory/NeuronHostAllocator.h"
#include "runtime/NeuronGenerator.h"
#include "runtime/NeuronHostAccess.h"

using namespace torch_neuronx;

TEST(Hooks, DeviceFromPointerAndPinned) {
  ASSERT_TRUE(at::isPrivateUse1HooksRegistered());
  const auto* hooks = &at::detail::getPrivateUse1Hooks();
  EXPECT_TRUE(hooks->isAvailable());
  c10::DataPtr dev = caching_allocator().allocate_on(2, 4096);
  EXPECT_EQ(hooks->getDeviceFromPtr(static_cast<char*>(dev.get()) + 100), c10::Device(c10::DeviceType::PrivateUse1, 2));
  at::DataPtr pinned = host_allocator().allocate(1000);
  EXPECT_TRUE(hooks->isPinnedPtr(pinned.get()));
  int local = 0;
  EXPECT_FALSE(hooks->isPinnedPtr(&local));
  EXPECT_EQ(hooks->getPinnedMemoryAllocator(), &host_allocator());
}

TEST(Hooks, ResizeStorageKeepsBytes) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 16, &caching_allocator(), true);
  std::memset(storage.mutable_data(), 7, 16);
  at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(storage, 4096);
  ASSERT_EQ(storage.nbytes(), 4096u);
  caching_allocator().emptyCache();  // the old block is gone; the copy must have read it first
  wait_for_producers(0);             // the copy may still run on the stream's worker (thread queue mode)
  const auto* bytes = static_cast<const unsigned char*>(storage.data());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 7);
  EXPECT_EQ(storage.device(), c10::Device(c10::DeviceType::PrivateUse1, 0));
}

TEST(Generator, DefaultsArePerDeviceAndPhiloxStateful) {
  const at::Generator& g0 = default_generator(0);
  const at::Generator& g1 = default_generator(1);
  EXPECT_NE(g0.unsafeGetGeneratorImpl(), g1.unsafeGetGeneratorImpl());
  auto* impl = at::check_generator<NeuronGeneratorImpl>(g0);
  impl->set_current_seed(42);
  auto [seed, offset] = impl->philox_reserve(5);
  EXPECT_EQ(seed, 42u);
  EXPECT_EQ(offset, 0u);
  EXPECT_EQ(impl->get_offset(), 8u);  // rounded up to a multiple of 4
  auto state = impl->get_state();
  EXPECT_EQ(state->numel(), 16);
  const at::Generator copy = g0.clone();  // named: check_generator returns a pointer into it
  EXPECT_EQ(at::check_generator<NeuronGeneratorImpl>(copy)->get_offset(), 8u);
}

TEST(Generator, PhiloxIsDeterministicAndSpreads) {
  auto a = philox4x32(1, 0, 0), b = philox4x32(1, 0, 0), c = philox4x32(1, 0, 1), d = philox4x32(2, 0, 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_NE(philox4x32(1, 4, 0), a);  // the offset is part of the counter
}
