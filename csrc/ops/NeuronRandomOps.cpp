// Random ops on the device's Philox generator (ATen's CPU random kernels
// need a CPU generator). Each op reserves counter space from the generator
// (offset += numel rounded to 4), fills a host buffer in element order, and
// writes it into the tensor in stream order. Same seed, same numbers.
//
// A CPU tensor drawn with a neuron generator (`torch.randn(n,
// generator=neuron_gen)`, as Diffusers' randn_tensor does for neuron) reaches
// these kernels too, since the generator decides the dispatch: it gets the
// numbers the same call on neuron would give, and the offset advances.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones_like.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronGenerator.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

NeuronGeneratorImpl* generator_for(const at::Tensor& self, const std::optional<at::Generator>& gen) {
  if (gen.has_value() && gen->defined()) {
    TORCH_CHECK(gen->device().is_privateuseone(), "expected a neuron generator for a neuron tensor, got a ",
                gen->device(), " generator");
    return at::check_generator<NeuronGeneratorImpl>(gen);
  }
  TORCH_CHECK(self.is_privateuseone(), "a ", self.device(), " tensor reached a neuron random kernel without a ",
              "neuron generator; please report the call");
  return at::check_generator<NeuronGeneratorImpl>(default_generator(self.device().index()));
}

// Calls fn(word_index) -> value for each element, in element order, into a
// double buffer, then casts into self.
template <typename Fn>
at::Tensor& generate(at::Tensor& self, const std::optional<at::Generator>& gen, int words_per_element, Fn fn) {
  const int64_t n = self.numel();
  if (n == 0) return self;
  NeuronGeneratorImpl* g = generator_for(self, gen);
  uint64_t seed, offset;
  {
    std::lock_guard<std::mutex> lock(g->mutex_);
    std::tie(seed, offset) = g->philox_reserve(static_cast<uint64_t>(n) * words_per_element);
  }
  at::Tensor values = at::empty({n}, self.options().device(c10::kCPU).dtype(at::kDouble));
  double* out = values.mutable_data_ptr<double>();
  uint64_t cached_counter = ~uint64_t(0);
  std::array<uint32_t, 4> block{};
  auto word = [&](uint64_t w) {
    if (w / 4 != cached_counter) {
      cached_counter = w / 4;
      block = philox4x32(seed, offset, cached_counter);
    }
    return block[w % 4];
  };
  for (int64_t i = 0; i < n; ++i) out[i] = fn(word, static_cast<uint64_t>(i) * words_per_element);
  if (self.is_cpu()) {  // a CPU tensor drawn with a neuron generator: the same numbers, on the CPU
    self.copy_(values.view(self.sizes()));
    return self;
  }
  HostAccess host(self, HostAccess::Mode::kWrite);
  host.cpu().copy_(values.view(self.sizes()));
  host.finish();
  return self;
}

template <typename Word>
double uniform01(Word& word, uint64_t w) {  // in [0, 1), 53 random bits
  uint64_t bits = (static_cast<uint64_t>(word(w)) << 32 | word(w + 1)) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::uniform_");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return generate(self, gen, 2, [&](auto& word, uint64_t w) { return from + (to - from) * uniform01(word, w); });
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return generate(self, gen, 4, [&](auto& word, uint64_t w) {
    double u1 = 1.0 - uniform01(word, w), u2 = uniform01(word, w + 2);  // u1 in (0, 1]
    return mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  });
}

// random_() without `to`: [0, 2^mantissa] for floating types, [0, max] for
// integers, {0, 1} for bool, as on CPU.
int64_t default_random_to(at::ScalarType t) {
  switch (t) {
    case at::kBool:
      return 2;
    case at::kHalf:
      return (int64_t(1) << 11) + 1;
    case at::kBFloat16:
      return (int64_t(1) << 8) + 1;
    case at::kFloat:
      return (int64_t(1) << 24) + 1;
    case at::kDouble:
      return (int64_t(1) << 53) + 1;
    case at::kLong:
      return std::numeric_limits<int64_t>::max();
    case at::kInt:
      return int64_t(std::numeric_limits<int32_t>::max()) + 1;
    case at::kShort:
      return int64_t(std::numeric_limits<int16_t>::max()) + 1;
    case at::kChar:
      return int64_t(std::numeric_limits<int8_t>::max()) + 1;
    case at::kByte:
      return int64_t(std::numeric_limits<uint8_t>::max()) + 1;
    default:
      TORCH_CHECK(false, "random_ is not supported for dtype ", t, " on neuron");
  }
}

at::Tensor& random_range(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen) {
  const int64_t hi = to.has_value() ? *to : default_random_to(self.scalar_type());
  TORCH_CHECK(from < hi, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", hi);
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(from);
  return generate(self, gen, 2, [&](auto& word, uint64_t w) {
    uint64_t r = static_cast<uint64_t>(word(w)) << 32 | word(w + 1);
    return static_cast<double>(static_cast<int64_t>(from + r % range));
  });
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::random_");
  return random_range(self, 0, std::nullopt, gen);
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::random_.from");
  return random_range(self, from, to, gen);
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::random_.to");
  return random_range(self, 0, to, gen);
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::bernoulli_.float");
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return generate(self, gen, 2, [&](auto& word, uint64_t w) { return uniform01(word, w) < p ? 1.0 : 0.0; });
}

at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
  NEURON_COUNT_OP("aten::exponential_");
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  return generate(self, gen, 2, [&](auto& word, uint64_t w) { return -std::log1p(-uniform01(word, w)) / lambd; });
}

// Dropout draws its mask from the device generator (the CPU kernel would
// draw from the CPU's default generator, which the schema gives no way to
// replace); otherwise it follows the CPU kernel: a bool mask of Bernoulli(1-p)
// draws, output = input * mask / (1 - p).
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  NEURON_COUNT_OP("aten::native_dropout");
  TORCH_CHECK(0 <= p && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (input.numel() == 0) return {input, at::empty_like(input, input.options())};
  if (train.has_value() && !*train) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  const double keep = 1. - p;
  const double scale = keep == 0 ? 0. : 1. / keep;
  at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool), at::MemoryFormat::Contiguous);
  mask.bernoulli_(keep);
  return {input.mul(mask).mul_(scale), mask};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_dropout", native_dropout);
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("random_", random_);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("exponential_", exponential_);
}

}  // namespace torch_neuronx
