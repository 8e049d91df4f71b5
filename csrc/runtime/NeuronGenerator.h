// The neuron random generator: a Philox-style (seed, offset) state, one
// default generator per device. The state tensor is 16 uint8 bytes, the seed
// then the offset (both little-endian uint64), as for CUDA, so that DTensor's
// offset-based RNG tracker can read and move it. Random kernels reserve
// counter space with philox_reserve() and generate with philox4x32().
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <array>
#include <cstdint>

#include "runtime/NeuronExport.h"

namespace torch_neuronx {

constexpr uint64_t kDefaultRngSeed = 67280421310721ull;  // as c10's default_rng_seed_val

class TORCH_NEURONX_API NeuronGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit NeuronGeneratorImpl(c10::DeviceIndex device, uint64_t seed = kDefaultRngSeed);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;  // reseeds non-deterministically
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // Returns (seed, offset) and advances the offset by `increment` rounded up
  // to a multiple of 4 (each counter value yields 4 random 32-bit words).
  std::pair<uint64_t, uint64_t> philox_reserve(uint64_t increment);

 private:
  NeuronGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// Philox4x32-10 of counter (index, offset) under key seed.
TORCH_NEURONX_API std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t offset, uint64_t index);

TORCH_NEURONX_API const at::Generator& default_generator(c10::DeviceIndex device = -1);
TORCH_NEURONX_API at::Generator make_generator(c10::DeviceIndex device = -1);

}  // namespace torch_neuronx
