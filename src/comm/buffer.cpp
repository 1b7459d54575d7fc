#include "comm/buffer.hpp"

#include <fmt/format.h>
#include <type_traits>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {

size_t dtype_size(Dtype dtype) {
  return with_element_type(dtype, [](auto element) { return sizeof(element); });
}

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return "float32";
    case Dtype::float64: return "float64";
    case Dtype::int32: return "int32";
    case Dtype::bfloat16: return "bfloat16";
    case Dtype::float16: return "float16";
    case Dtype::int8: return "int8";
    case Dtype::uint8: return "uint8";
    case Dtype::int64: return "int64";
  }
  return "float32";
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (Dtype d : every_dtype) names.emplace_back(dtype_name(d));
  return names;
}

Dtype parse_dtype(std::string_view name, std::string_view field) {
  for (Dtype d : every_dtype)
    if (dtype_name(d) == name) return d;
  throw InputError(fmt::format("{}: unknown dtype '{}'{}; allowed: {}", field, name,
                               did_you_mean(name, dtype_names()), join(dtype_names())));
}

long double Buffer::get(size_t i) const {
  return with_element_type(dtype_, [&](auto element) {
    using T = decltype(element);
    if constexpr (std::is_same_v<T, Bfloat16> || std::is_same_v<T, Float16>)
      return static_cast<long double>(static_cast<float>(as<T>()[i]));
    else
      return static_cast<long double>(as<T>()[i]);
  });
}

void Buffer::set(size_t i, long double value) {
  with_element_type(dtype_, [&](auto element) {
    using T = decltype(element);
    if constexpr (std::is_same_v<T, Bfloat16> || std::is_same_v<T, Float16>)
      as<T>()[i] = T(static_cast<float>(value));
    else
      as<T>()[i] = static_cast<T>(value);
  });
}

}  // namespace collsim
