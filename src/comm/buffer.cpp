#include "comm/buffer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <stdexcept>
#include <type_traits>

#include "util/named_enum.hpp"

namespace collsim {

namespace {
const NamedEnum<Dtype>& dtypes() {
  static const NamedEnum<Dtype> table{"dtype",
                                      {{Dtype::float32, "float32"},
                                       {Dtype::float64, "float64"},
                                       {Dtype::int32, "int32"},
                                       {Dtype::bfloat16, "bfloat16"},
                                       {Dtype::float16, "float16"},
                                       {Dtype::int8, "int8"},
                                       {Dtype::uint8, "uint8"},
                                       {Dtype::int64, "int64"}}};
  return table;
}
}  // namespace

std::string_view dtype_name(Dtype dtype) { return dtypes().name(dtype); }
std::vector<std::string> dtype_names() { return dtypes().names(); }
// PyTorch's and NCCL's names for the same types (torch.bfloat16 is "bf16" in most training
// configs; torch.half, torch.float, torch.double, torch.int, torch.long; NCCL's ncclHalf,
// ncclFloat, ncclDouble, ncclChar, ncclInt: nccl.h, NCCL 2.21, and nccl-tests' -d names).
namespace {
const std::pair<std::string_view, Dtype> dtype_aliases[] = {
    {"bf16", Dtype::bfloat16}, {"fp16", Dtype::float16}, {"half", Dtype::float16}, {"float", Dtype::float32},
    {"fp32", Dtype::float32},  {"double", Dtype::float64}, {"fp64", Dtype::float64}, {"int", Dtype::int32},
    {"long", Dtype::int64},    {"char", Dtype::int8}};
}  // namespace

Dtype parse_dtype(std::string_view name, std::string_view field) {
  for (const auto& [alias, dtype] : dtype_aliases)
    if (name == alias) return dtype;
  const std::vector<std::string> names = dtype_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return dtypes().parse(name, field);
  std::vector<std::string> aliases, every = names;
  for (const auto& entry : dtype_aliases) aliases.emplace_back(entry.first);
  every.insert(every.end(), aliases.begin(), aliases.end());
  throw InputError(fmt::format("{}: unknown dtype '{}'{}; allowed: {} (or PyTorch's and NCCL's names: {})", field,
                               name, did_you_mean(name, every), join(names), join(aliases)));
}

size_t CarriedMap::piecewise_at(size_t x) const {
  // the last piece that starts at or before x
  auto next = std::upper_bound(pieces->begin(), pieces->end(), x,
                               [](size_t value, const Start& start) { return value < start.logical; });
  const Start& start = *(next - 1);
  const Start end = next == pieces->end() ? Start{logical, carried} : *next;
  const size_t length = end.logical - start.logical;
  if (length == 0) return start.carried;
  return start.carried + static_cast<size_t>(static_cast<unsigned __int128>(x - start.logical) *
                                              (end.carried - start.carried) / length);
}

size_t CarriedMap::room_for(size_t length) const {
  if (carried == logical) return length;
  auto ceil_share = [length](size_t part, size_t whole) {
    return static_cast<size_t>((static_cast<unsigned __int128>(length) * part + whole - 1) / whole);
  };
  if (!pieces) return ceil_share(carried, logical);
  size_t densest = 0;
  for (size_t i = 0; i < pieces->size(); ++i) {
    const Start& start = (*pieces)[i];
    const Start end = i + 1 < pieces->size() ? (*pieces)[i + 1] : Start{logical, carried};
    if (end.logical > start.logical)
      densest = std::max(densest, ceil_share(end.carried - start.carried, end.logical - start.logical));
  }
  return std::min(carried, densest + pieces->size());
}

View Buffer::holding(const View& part) {
  if (part.count > map_.carried)
    throw std::logic_error(fmt::format("Buffer::holding: a part of {} carried elements in scratch of {}", part.count,
                                       map_.carried));
  return {bytes_.data(), part.count, elem_bytes(), part.logical};
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
