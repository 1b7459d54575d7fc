#include "comm/reduce_op.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <stdexcept>
#include <type_traits>

#include "util/errors.hpp"
#include "util/named_enum.hpp"

namespace collsim {
namespace {

template <typename T>
constexpr bool is_float16 = std::is_same_v<T, Bfloat16> || std::is_same_v<T, Float16>;

// One element of `kind`: in the type itself for float, double; through float, rounded to
// the type once per operation, for the 16-bit floats; modulo 2^bits for integers
// (computed unsigned, where overflow is defined), as a GPU's integer adds wrap.
template <typename T>
T combine_one(OpKind kind, T a, T b) {
  if constexpr (is_float16<T>) {
    return T(combine_one(kind, static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no promotion to int
    switch (kind) {
      case OpKind::sum:
      case OpKind::avg: return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) + static_cast<U>(b)));
      case OpKind::prod: return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) * static_cast<U>(b)));
      case OpKind::min: return std::min(a, b);
      case OpKind::max: return std::max(a, b);
    }
    return a;
  } else {
    switch (kind) {
      case OpKind::sum:
      case OpKind::avg: return a + b;
      case OpKind::prod: return a * b;
      case OpKind::min: return std::min(a, b);
      case OpKind::max: return std::max(a, b);
    }
    return a;
  }
}

// The kind is a constant inside each loop, so that the compiler keeps the loops tight.
template <OpKind kind, typename T>
void combine_all(T* into, const T* from, size_t count) {
  for (size_t i = 0; i < count; ++i) into[i] = combine_one(kind, into[i], from[i]);
}

template <typename T>
void combine_typed(OpKind kind, T* into, const T* from, size_t count) {
  switch (kind) {
    case OpKind::sum:
    case OpKind::avg: return combine_all<OpKind::sum>(into, from, count);
    case OpKind::prod: return combine_all<OpKind::prod>(into, from, count);
    case OpKind::min: return combine_all<OpKind::min>(into, from, count);
    case OpKind::max: return combine_all<OpKind::max>(into, from, count);
  }
}

// avg's final division: integers truncate (in a wide type: the divisor need not fit T).
template <typename T>
void divide_typed(T* data, size_t count, int divisor) {
  for (size_t i = 0; i < count; ++i) {
    if constexpr (is_float16<T>)
      data[i] = T(static_cast<float>(data[i]) / static_cast<float>(divisor));
    else if constexpr (std::is_integral_v<T>)
      data[i] = static_cast<T>(static_cast<int64_t>(data[i]) / divisor);
    else
      data[i] /= static_cast<T>(divisor);
  }
}

}  // namespace

namespace {
const NamedEnum<OpKind>& ops() {
  static const NamedEnum<OpKind> table{
      "op", {{OpKind::sum, "sum"}, {OpKind::prod, "prod"}, {OpKind::min, "min"}, {OpKind::max, "max"}, {OpKind::avg, "avg"}}};
  return table;
}
}  // namespace

std::string_view op_name(OpKind op) { return ops().name(op); }
std::vector<std::string> op_names() { return ops().names(); }
OpKind parse_op(std::string_view name, std::string_view field) { return ops().parse(name, field); }

void ReduceOp::combine(View into, View from) const {
  if (into.count != from.count || into.logical != from.logical)
    throw std::logic_error("ReduceOp::combine: views of different lengths");
  with_element_type(dtype_, [&](auto element) {
    using T = decltype(element);
    combine_typed(kind_, reinterpret_cast<T*>(into.data), reinterpret_cast<const T*>(from.data), into.count);
  });
  if (cost_ && from.logical > 0) cost_(from.logical);
}

void ReduceOp::finalize(View data, int group_size) const {
  if (kind_ != OpKind::avg) return;
  with_element_type(dtype_, [&](auto element) {
    using T = decltype(element);
    divide_typed(reinterpret_cast<T*>(data.data), data.count, group_size);
  });
}

}  // namespace collsim
