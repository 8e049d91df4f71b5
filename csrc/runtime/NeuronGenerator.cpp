#include "runtime/NeuronGenerator.h"

#include <ATen/Utils.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "runtime/NeuronFunctions.h"

namespace torch_neuronx {

NeuronGeneratorImpl::NeuronGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void NeuronGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t NeuronGeneratorImpl::seed() {
  uint64_t s = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  set_current_seed(s);
  return s;
}

void NeuronGeneratorImpl::set_offset(uint64_t offset) {
  TORCH_CHECK(offset % 4 == 0, "neuron generator offset must be a multiple of 4, got ", offset);
  offset_ = offset;
}

c10::intrusive_ptr<c10::TensorImpl> NeuronGeneratorImpl::get_state() const {
  auto state = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(c10::Storage::use_byte_size_t(), 16, c10::GetCPUAllocator(), true),
      c10::DispatchKeySet(c10::DispatchKey::CPU), caffe2::TypeMeta::Make<uint8_t>());
  state->set_sizes_contiguous({16});
  auto* bytes = static_cast<uint8_t*>(state->mutable_data());
  std::memcpy(bytes, &seed_, 8);
  std::memcpy(bytes + 8, &offset_, 8);
  return state;
}

void NeuronGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16,
              "a neuron RNG state is a uint8 tensor of 16 bytes (seed, offset); got ", new_state.dtype().name(),
              " with ", new_state.numel(), " elements");
  const auto* bytes = static_cast<const uint8_t*>(new_state.data());
  uint64_t seed, offset;
  std::memcpy(&seed, bytes, 8);
  std::memcpy(&offset, bytes + 8, 8);
  seed_ = seed;
  set_offset(offset);
}

std::pair<uint64_t, uint64_t> NeuronGeneratorImpl::philox_reserve(uint64_t increment) {
  uint64_t offset = offset_;
  offset_ += (increment + 3) / 4 * 4;
  return {seed_, offset};
}

NeuronGeneratorImpl* NeuronGeneratorImpl::clone_impl() const {
  auto* g = new NeuronGeneratorImpl(device().index(), seed_);
  g->offset_ = offset_;
  return g;
}

std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t offset, uint64_t index) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  uint32_t c[4] = {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), static_cast<uint32_t>(offset),
                   static_cast<uint32_t>(offset >> 32)};
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = static_cast<uint32_t>(p1);
    c[2] = n2;
    c[3] = static_cast<uint32_t>(p0);
    k0 += kW0;
    k1 += kW1;
  }
  return {c[0], c[1], c[2], c[3]};
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static auto* gens = [] {
    auto* v = new std::vector<at::Generator>();
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) v->push_back(at::make_generator<NeuronGeneratorImpl>(i));
    return v;
  }();
  return (*gens)[resolve_device(device)];
}

at::Generator make_generator(c10::DeviceIndex device) {
  return at::make_generator<NeuronGeneratorImpl>(resolve_device(device));
}

}  // namespace torch_neuronx
