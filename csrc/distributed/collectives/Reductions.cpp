#include "distributed/collectives/Reductions.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace torch_neuronx::dist {
namespace {

template <class T, class F>
void apply(void* dst, const void* src, size_t n, F f) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < n; ++i) d[i] = f(d[i], s[i]);
}

template <class T>
void reduce_typed(void* dst, const void* src, size_t n, Reduce op) {
  using Acc = std::conditional_t<std::is_same_v<T, c10::BFloat16> || std::is_same_v<T, c10::Half>, float, T>;
  switch (op) {
    case Reduce::kSum:
      return apply<T>(dst, src, n, [](T a, T b) { return T(Acc(a) + Acc(b)); });
    case Reduce::kProduct:
      return apply<T>(dst, src, n, [](T a, T b) { return T(Acc(a) * Acc(b)); });
    case Reduce::kMin:
      return apply<T>(dst, src, n, [](T a, T b) { return Acc(b) < Acc(a) ? b : a; });
    case Reduce::kMax:
      return apply<T>(dst, src, n, [](T a, T b) { return Acc(b) > Acc(a) ? b : a; });
    default:
      if constexpr (std::is_integral_v<T>) {
        if (op == Reduce::kBand) return apply<T>(dst, src, n, [](T a, T b) { return T(a & b); });
        if (op == Reduce::kBor) return apply<T>(dst, src, n, [](T a, T b) { return T(a | b); });
        return apply<T>(dst, src, n, [](T a, T b) { return T(a ^ b); });
      }
      TORCH_INTERNAL_ASSERT(false, "bitwise reduction on a floating dtype");
  }
}

void reduce_bool(void* dst, const void* src, size_t n, Reduce op) {
  // As gloo: SUM and MAX are logical or, PRODUCT and MIN logical and.
  uint8_t* d = static_cast<uint8_t*>(dst);
  const uint8_t* s = static_cast<const uint8_t*>(src);
  const bool is_and = op == Reduce::kProduct || op == Reduce::kMin || op == Reduce::kBand;
  const bool is_xor = op == Reduce::kBxor;
  for (size_t i = 0; i < n; ++i) d[i] = is_xor ? (d[i] != s[i]) : is_and ? (d[i] && s[i]) : (d[i] || s[i]);
}

bool floating(c10::ScalarType t) { return c10::isFloatingType(t); }

}  // namespace

std::string unsupported_reason(c10::ScalarType dtype, Reduce op) {
  switch (dtype) {
    case c10::kFloat:
    case c10::kDouble:
    case c10::kBFloat16:
    case c10::kHalf:
      if (op == Reduce::kBand || op == Reduce::kBor || op == Reduce::kBxor) {
        return std::string("bitwise reductions need an integer or bool dtype, got ") + c10::toString(dtype);
      }
      return "";
    case c10::kLong:
    case c10::kInt:
    case c10::kByte:
    case c10::kChar:
    case c10::kShort:
    case c10::kBool:
      return "";
    default:
      return std::string("dtype ") + c10::toString(dtype) +
             " is not supported by the neuron process group (float32, float64, bfloat16, float16, int64, int32, "
             "int16, int8, uint8, bool are)";
  }
}

void reduce_into(void* dst, const void* src, size_t n, c10::ScalarType dtype, Reduce op) {
  switch (dtype) {
    case c10::kFloat:
      return reduce_typed<float>(dst, src, n, op);
    case c10::kDouble:
      return reduce_typed<double>(dst, src, n, op);
    case c10::kBFloat16:
      return reduce_typed<c10::BFloat16>(dst, src, n, op);
    case c10::kHalf:
      return reduce_typed<c10::Half>(dst, src, n, op);
    case c10::kLong:
      return reduce_typed<int64_t>(dst, src, n, op);
    case c10::kInt:
      return reduce_typed<int32_t>(dst, src, n, op);
    case c10::kShort:
      return reduce_typed<int16_t>(dst, src, n, op);
    case c10::kChar:
      return reduce_typed<int8_t>(dst, src, n, op);
    case c10::kByte:
      return reduce_typed<uint8_t>(dst, src, n, op);
    case c10::kBool:
      return reduce_bool(dst, src, n, op);
    default:
      TORCH_CHECK(false, unsupported_reason(dtype, op));
  }
}

void scale(void* dst, size_t n, c10::ScalarType dtype, double factor, bool divide) {
  TORCH_CHECK(floating(dtype), "this reduction needs a floating dtype, got ", dtype);
  auto run = [&](auto* d) {
    using T = std::remove_pointer_t<decltype(d)>;
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Acc f = static_cast<Acc>(factor);
    for (size_t i = 0; i < n; ++i) d[i] = T(divide ? Acc(d[i]) / f : Acc(d[i]) * f);
  };
  switch (dtype) {
    case c10::kFloat:
      return run(static_cast<float*>(dst));
    case c10::kDouble:
      return run(static_cast<double*>(dst));
    case c10::kBFloat16:
      return run(static_cast<c10::BFloat16*>(dst));
    case c10::kHalf:
      return run(static_cast<c10::Half*>(dst));
    default:
      TORCH_CHECK(false, "unreachable");
  }
}

}  // namespace torch_neuronx::dist
