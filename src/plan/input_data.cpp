#include "plan/input_data.hpp"

#include <type_traits>

#include "util/random.hpp"

namespace collsim {
namespace {

template <typename T>
void fill_typed(T* data, size_t count, int rank, OpKind op, uint64_t seed, size_t first) {
  const uint64_t base = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(rank) + 1));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = splitmix64(base + first + i);
    if constexpr (std::is_unsigned_v<T>) {
      // Sums and products wrap around (uint8 sums past 255): the reference wraps too.
      data[i] = op == OpKind::prod ? static_cast<T>((bits & 1) ? 1 : 3) : static_cast<T>(bits % 101);
    } else if constexpr (std::is_integral_v<T>) {
      // Products of +-1 never overflow; sums of values in [-100, 100] stay exact (int8
      // sums wrap around past 127, and the reference wraps too).
      data[i] = op == OpKind::prod ? ((bits & 1) ? 1 : -1) : static_cast<T>(static_cast<int>(bits % 201) - 100);
    } else {
      // Products of values in [0.99, 1.01] stay near 1 for any p; others in [-1, 1).
      data[i] = op == OpKind::prod ? static_cast<T>(0.99 + 0.02 * unit_interval(bits)) : static_cast<T>(2 * unit_interval(bits) - 1);
    }
  }
}

}  // namespace

void fill_input(Buffer& buf, int rank, OpKind op, uint64_t seed, size_t first) {
  with_element_type(buf.dtype(), [&](auto element) {
    using T = decltype(element);
    fill_typed(buf.as<T>(), buf.carried(), rank, op, seed, first);
  });
}

}  // namespace collsim
