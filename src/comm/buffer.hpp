#pragma once
// Real data that algorithms move and reduce. A Buffer owns typed elements behind a
// type-erased byte array, so that one algorithm source serves every dtype.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
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

// A window on consecutive elements of a Buffer (or of a received message): `count`
// elements in memory standing for `logical` elements of the vector the network carries
// (see "logical vs carried size" in docs/: a message's simulated bytes are its logical
// elements times the element's size, whatever is carried).
struct View {
  std::byte* data = nullptr;
  size_t count = 0;
  size_t elem_bytes = 0;
  size_t logical = 0;

  size_t bytes() const { return count * elem_bytes; }
  double logical_bytes() const { return static_cast<double>(logical) * static_cast<double>(elem_bytes); }
};

// Copies the elements of `from` into `to` (at least as many). An empty view may have no
// storage at all (a shard of 0 elements), and memcpy from a null pointer is undefined even
// for 0 bytes, so nothing is copied then.
inline void copy_elements(View to, View from) {
  if (from.bytes() > 0) std::memcpy(to.data, from.data, from.bytes());
}

// Where logical elements lie in memory: a vector of `logical` elements whose memory holds
// `carried` of them (carried <= logical). Logical element x lies in carried element
// floor(x * carried / logical), so the logical elements [a, b) are the carried elements
// [at(a), at(b)): any two ranks map the same logical span to the same carried span, and
// spans that tile the vector tile its memory. When everything is carried the map is the
// identity. A map may also be piecewise (a gradient bucket's layers, each its own share of
// the carried elements): the same rule inside each piece.
struct CarriedMap {
  // Where a piece begins: its first logical and first carried element.
  struct Start {
    size_t logical = 0, carried = 0;
  };
  size_t carried = 0;
  size_t logical = 0;
  // The pieces' starts in order, the first at (0, 0); none: one piece. Shared, as buffers
  // and their maps are copied freely.
  std::shared_ptr<const std::vector<Start>> pieces;

  size_t at(size_t x) const {
    if (carried == logical) return x;
    if (pieces) return piecewise_at(x);
    return static_cast<size_t>(static_cast<unsigned __int128>(x) * carried / logical);
  }
  // Carried elements enough for any span of `length` logical elements (at(a + length) -
  // at(a) <= ceil(length * carried / logical) for every a; piecewise, the densest piece's
  // ratio and one more element for each piece the span may cross).
  size_t room_for(size_t length) const;

private:
  size_t piecewise_at(size_t x) const;
};

// Owns the carried elements of a vector (typed elements behind a type-erased byte array,
// so that one algorithm source serves every dtype). Algorithms work in logical elements,
// as if every element were carried: size() is the logical count and view() takes logical
// offsets; the Buffer finds their carried elements. Scratch space for parts of the vector
// comes from scratch() and holds views of it (holding()), so that a part keeps the
// logical size it stands for wherever it goes.
class Buffer {
public:
  Buffer() = default;
  Buffer(Dtype dtype, size_t count) : Buffer(dtype, count, count) {}
  Buffer(Dtype dtype, size_t carried, size_t logical) : Buffer(dtype, CarriedMap{carried, logical, nullptr}) {}
  Buffer(Dtype dtype, CarriedMap map) : dtype_(dtype), map_(std::move(map)), bytes_(map_.carried * dtype_size(dtype)) {}

  Dtype dtype() const { return dtype_; }
  // Logical elements: what the algorithms split and the network carries.
  size_t size() const { return map_.logical; }
  // Elements in memory (get, set, as and data index these).
  size_t carried() const { return map_.carried; }
  const CarriedMap& map() const { return map_; }
  size_t elem_bytes() const { return dtype_size(dtype_); }
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }

  View all() { return {bytes_.data(), map_.carried, elem_bytes(), map_.logical}; }
  // The logical elements [offset, offset + length).
  View view(size_t offset, size_t length) {
    const size_t first = map_.at(offset);
    return {bytes_.data() + first * elem_bytes(), map_.at(offset + length) - first, elem_bytes(), length};
  }
  // The carried elements [offset, offset + length), standing for `logical` elements (a
  // part laid out by the caller, such as a gradient bucket).
  View carried_view(size_t offset, size_t length, size_t logical) {
    return {bytes_.data() + offset * elem_bytes(), length, elem_bytes(), logical};
  }
  // Scratch room for any part of `length` logical elements of this vector (holding()).
  Buffer scratch(size_t length) const { return Buffer(dtype_, std::min(map_.room_for(length), length), length); }
  // This buffer's first elements, shaped as `part` (as many carried elements, standing for
  // as many logical ones): where a copy of the part, or a peer's version of it, goes.
  View holding(const View& part);
  // Block `index` of `parts` equal blocks (alltoall's): count / parts elements each, in
  // logical and in carried elements alike, so that any block can take any other's place.
  View block(int parts, int index) {
    const auto n = static_cast<size_t>(parts), i = static_cast<size_t>(index);
    const size_t carried = map_.carried / n;
    return {bytes_.data() + i * carried * elem_bytes(), carried, elem_bytes(), map_.logical / n};
  }

  // A copy of the carried elements [offset, offset + map.carried), laid out by `map` (a
  // gradient bucket's part of the whole vector).
  Buffer slice(size_t offset, const CarriedMap& map) const {
    Buffer piece(dtype_, map);
    if (map.carried > 0) std::memcpy(piece.data(), data() + offset * elem_bytes(), map.carried * elem_bytes());
    return piece;
  }

  template <typename T> T* as() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(bytes_.data()); }

  // Carried element i widened to long double, whatever the dtype (verification and tests).
  long double get(size_t i) const;
  void set(size_t i, long double value);

private:
  Dtype dtype_ = Dtype::float32;
  CarriedMap map_;
  std::vector<std::byte> bytes_;
};

}  // namespace collsim
