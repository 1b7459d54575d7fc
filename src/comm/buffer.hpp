#pragma once
// Real data that algorithms move and reduce. A Buffer owns typed elements behind a
// type-erased byte array, so that one algorithm source serves every dtype.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "comm/float16.hpp"

namespace collsim {

// bfloat16 and float16 are reduced through float, each result rounded to the type
// (float16.hpp); integers wrap around on overflow, as on a GPU.
enum class Dtype { float32, float64, int32, bfloat16, float16, int8, uint8, int64 };
inline constexpr Dtype every_dtype[] = {Dtype::float32, Dtype::float64, Dtype::int32, Dtype::bfloat16,
                                        Dtype::float16, Dtype::int8,    Dtype::uint8, Dtype::int64};

// Calls f(T{}) with the C++ type that holds one element of `dtype`.
template <typename F>
decltype(auto) with_element_type(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::float64: return f(double{});
    case Dtype::int32: return f(int32_t{});
    case Dtype::bfloat16: return f(Bfloat16{});
    case Dtype::float16: return f(Float16{});
    case Dtype::int8: return f(int8_t{});
    case Dtype::uint8: return f(uint8_t{});
    case Dtype::int64: return f(int64_t{});
    case Dtype::float32: break;
  }
  return f(float{});
}

// Inline: every view of a buffer asks it (a ring step makes several).
inline size_t dtype_size(Dtype dtype) {
  return with_element_type(dtype, [](auto element) { return sizeof(element); });
}
std::string_view dtype_name(Dtype dtype);
Dtype parse_dtype(std::string_view name, std::string_view field);
std::vector<std::string> dtype_names();

// A window on consecutive elements of a Buffer (or of a received message).
struct View {
  std::byte* data = nullptr;
  size_t count = 0;
  size_t elem_bytes = 0;

  size_t bytes() const { return count * elem_bytes; }
  View sub(size_t offset, size_t length) const { return {data + offset * elem_bytes, length, elem_bytes}; }
};

// Copies the elements of `from` into `to` (at least as many). An empty view may have no
// storage at all (a shard of 0 elements), and memcpy from a null pointer is undefined even
// for 0 bytes, so nothing is copied then.
inline void copy_elements(View to, View from) {
  if (from.bytes() > 0) std::memcpy(to.data, from.data, from.bytes());
}

class Buffer {
public:
  Buffer() = default;
  Buffer(Dtype dtype, size_t count) : dtype_(dtype), count_(count), bytes_(count * dtype_size(dtype)) {}

  Dtype dtype() const { return dtype_; }
  size_t size() const { return count_; }
  size_t elem_bytes() const { return dtype_size(dtype_); }
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }

  View all() { return {bytes_.data(), count_, elem_bytes()}; }
  View view(size_t offset, size_t length) { return all().sub(offset, length); }

  // A copy of `length` elements from `offset` (a gradient bucket's part of the whole vector).
  Buffer slice(size_t offset, size_t length) const {
    Buffer piece(dtype_, length);
    if (length > 0) std::memcpy(piece.data(), data() + offset * elem_bytes(), length * elem_bytes());
    return piece;
  }

  template <typename T> T* as() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(bytes_.data()); }

  // Element i widened to long double, whatever the dtype (for verification and tests).
  long double get(size_t i) const;
  void set(size_t i, long double value);

private:
  Dtype dtype_ = Dtype::float32;
  size_t count_ = 0;
  std::vector<std::byte> bytes_;
};

// Simulated bytes of a message carrying `elems` elements when each carried element stands
// for `bytes_per_elem` logical bytes (see "logical vs carried size" in docs/).
// Rounded half away from zero, as std::llround, without its library call (twice per
// message): the product is never negative, and x - trunc(x) is exact for a double.
inline uint64_t simulated_bytes(size_t elems, double bytes_per_elem) {
  const double exact = static_cast<double>(elems) * bytes_per_elem;
  const auto whole = static_cast<uint64_t>(exact);
  return whole + (exact - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

}  // namespace collsim
