#include "comm/buffer.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {

size_t dtype_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return 4;
    case Dtype::float64: return 8;
    case Dtype::int32: return 4;
  }
  return 4;
}

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return "float32";
    case Dtype::float64: return "float64";
    case Dtype::int32: return "int32";
  }
  return "float32";
}

std::vector<std::string> dtype_names() { return {"float32", "float64", "int32"}; }

Dtype parse_dtype(std::string_view name, std::string_view field) {
  for (Dtype d : {Dtype::float32, Dtype::float64, Dtype::int32})
    if (dtype_name(d) == name) return d;
  throw InputError(fmt::format("{}: unknown dtype '{}'{}; allowed: {}", field, name,
                               did_you_mean(name, dtype_names()), join(dtype_names())));
}

long double Buffer::get(size_t i) const {
  switch (dtype_) {
    case Dtype::float32: return as<float>()[i];
    case Dtype::float64: return as<double>()[i];
    case Dtype::int32: return as<int32_t>()[i];
  }
  return 0;
}

void Buffer::set(size_t i, long double value) {
  switch (dtype_) {
    case Dtype::float32: as<float>()[i] = static_cast<float>(value); break;
    case Dtype::float64: as<double>()[i] = static_cast<double>(value); break;
    case Dtype::int32: as<int32_t>()[i] = static_cast<int32_t>(value); break;
  }
}

}  // namespace collsim
