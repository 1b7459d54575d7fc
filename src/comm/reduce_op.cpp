#include "comm/reduce_op.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <stdexcept>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {
namespace {

template <typename T>
void combine_typed(OpKind kind, T* into, const T* from, size_t count) {
  switch (kind) {
    case OpKind::sum:
    case OpKind::avg:
      for (size_t i = 0; i < count; ++i) into[i] += from[i];
      break;
    case OpKind::prod:
      for (size_t i = 0; i < count; ++i) into[i] *= from[i];
      break;
    case OpKind::min:
      for (size_t i = 0; i < count; ++i) into[i] = std::min(into[i], from[i]);
      break;
    case OpKind::max:
      for (size_t i = 0; i < count; ++i) into[i] = std::max(into[i], from[i]);
      break;
  }
}

template <typename T>
void divide_typed(T* data, size_t count, int divisor) {
  for (size_t i = 0; i < count; ++i) data[i] /= static_cast<T>(divisor);
}

}  // namespace

std::string_view op_name(OpKind op) {
  switch (op) {
    case OpKind::sum: return "sum";
    case OpKind::prod: return "prod";
    case OpKind::min: return "min";
    case OpKind::max: return "max";
    case OpKind::avg: return "avg";
  }
  return "sum";
}

std::vector<std::string> op_names() { return {"sum", "prod", "min", "max", "avg"}; }

OpKind parse_op(std::string_view name, std::string_view field) {
  for (OpKind op : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max, OpKind::avg})
    if (op_name(op) == name) return op;
  throw InputError(fmt::format("{}: unknown op '{}'{}; allowed: {}", field, name, did_you_mean(name, op_names()),
                               join(op_names())));
}

void ReduceOp::combine(View into, View from) const {
  if (into.count != from.count) throw std::logic_error("ReduceOp::combine: views of different lengths");
  switch (dtype_) {
    case Dtype::float32:
      combine_typed(kind_, reinterpret_cast<float*>(into.data), reinterpret_cast<const float*>(from.data), into.count);
      break;
    case Dtype::float64:
      combine_typed(kind_, reinterpret_cast<double*>(into.data), reinterpret_cast<const double*>(from.data), into.count);
      break;
    case Dtype::int32:
      combine_typed(kind_, reinterpret_cast<int32_t*>(into.data), reinterpret_cast<const int32_t*>(from.data),
                    into.count);
      break;
  }
}

void ReduceOp::finalize(View data, int group_size) const {
  if (kind_ != OpKind::avg) return;
  switch (dtype_) {
    case Dtype::float32: divide_typed(reinterpret_cast<float*>(data.data), data.count, group_size); break;
    case Dtype::float64: divide_typed(reinterpret_cast<double*>(data.data), data.count, group_size); break;
    case Dtype::int32: divide_typed(reinterpret_cast<int32_t*>(data.data), data.count, group_size); break;
  }
}

}  // namespace collsim
