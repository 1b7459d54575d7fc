#include "sim/input_data.hpp"

#include <type_traits>

namespace collsim {
namespace {

// splitmix64: a fast, well-mixed hash of (seed, rank, index).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 53 random bits.
double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

template <typename T>
void fill_typed(T* data, size_t count, int rank, OpKind op, uint64_t seed) {
  const uint64_t base = mix(seed ^ mix(static_cast<uint64_t>(rank) + 1));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = mix(base + i);
    if constexpr (std::is_integral_v<T>) {
      // Products of +-1 never overflow; sums of values in [-100, 100] stay exact.
      data[i] = op == OpKind::prod ? ((bits & 1) ? 1 : -1) : static_cast<T>(static_cast<int>(bits % 201) - 100);
    } else {
      // Products of values in [0.99, 1.01] stay near 1 for any p; others in [-1, 1).
      data[i] = op == OpKind::prod ? static_cast<T>(0.99 + 0.02 * unit(bits)) : static_cast<T>(2 * unit(bits) - 1);
    }
  }
}

}  // namespace

void fill_input(Buffer& buf, int rank, OpKind op, uint64_t seed) {
  switch (buf.dtype()) {
    case Dtype::float32: fill_typed(buf.as<float>(), buf.size(), rank, op, seed); break;
    case Dtype::float64: fill_typed(buf.as<double>(), buf.size(), rank, op, seed); break;
    case Dtype::int32: fill_typed(buf.as<int32_t>(), buf.size(), rank, op, seed); break;
  }
}

}  // namespace collsim
