#include "sim/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <type_traits>

#include "algorithms/chunks.hpp"

namespace collsim {
namespace {

// The reference is accumulated in a wider type than the data: double for float32 and
// int32 (exact for the integer inputs collsim generates), long double for float64.
template <typename T>
using Wide = std::conditional_t<std::is_same_v<T, double>, long double, double>;

template <typename T>
struct Reference {
  std::vector<Wide<T>> value;
  std::vector<Wide<T>> magnitude;  // sum of |x| over ranks, for the rounding bound
};

template <typename T>
Reference<T> reduce_reference(OpKind op, int p, const Buffer& shape, const InputFn& input) {
  using W = Wide<T>;
  const size_t n = shape.size();
  Reference<T> ref{std::vector<W>(n), std::vector<W>(n, 0)};
  Buffer in(shape.dtype(), n);
  for (int r = 0; r < p; ++r) {
    input(r, in);
    const T* x = in.as<T>();
    for (size_t i = 0; i < n; ++i) {
      const W v = static_cast<W>(x[i]);
      W& acc = ref.value[i];
      if (r == 0) acc = v;
      else if (op == OpKind::sum || op == OpKind::avg) acc += v;
      else if (op == OpKind::prod) acc *= v;
      else if (op == OpKind::min) acc = std::min(acc, v);
      else acc = std::max(acc, v);
      ref.magnitude[i] += std::fabs(v);
    }
  }
  if (op == OpKind::avg)
    for (W& v : ref.value) v = std::is_integral_v<T> ? std::trunc(v / p) : v / p;
  return ref;
}

template <typename T>
Wide<T> tolerance(OpKind op, int p, Wide<T> value, Wide<T> magnitude) {
  if constexpr (std::is_integral_v<T>) return 0;
  const Wide<T> eps = std::numeric_limits<T>::epsilon();
  switch (op) {
    case OpKind::sum: return (p - 1) * eps * magnitude;
    case OpKind::avg: return (p - 1) * eps * magnitude / p + eps * std::fabs(value);
    case OpKind::prod: return p * eps * std::fabs(value) * 1.01;
    case OpKind::min:
    case OpKind::max: return 0;
  }
  return 0;
}

template <typename T>
Verification verify_typed(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                          const InputFn& input) {
  using W = Wide<T>;
  Verification v;
  const int p = static_cast<int>(results.size());
  const Buffer& shape = results[static_cast<size_t>(root)];
  const size_t n = shape.size();

  // Broadcast and allgather copy data: the result must equal the inputs bit for bit.
  const bool copies = collective == Collective::broadcast || collective == Collective::allgather;
  const auto chunks = split_evenly(n, p);
  Reference<T> ref;
  if (collective == Collective::broadcast) {
    Buffer original(shape.dtype(), n);
    input(root, original);
    ref.value.assign(original.as<T>(), original.as<T>() + n);
  } else if (collective == Collective::allgather) {
    // chunk j of the result is chunk j of rank j's input
    ref.value.resize(n);
    Buffer original(shape.dtype(), n);
    for (int j = 0; j < p; ++j) {
      input(j, original);
      const Chunk& c = chunks[static_cast<size_t>(j)];
      const T* from = original.as<T>() + c.offset;
      std::copy(from, from + c.count, ref.value.begin() + static_cast<std::ptrdiff_t>(c.offset));
    }
  } else {
    ref = reduce_reference<T>(op, p, shape, input);
  }

  std::vector<int> checked;
  if (collective == Collective::reduce) checked.push_back(root);
  else for (int r = 0; r < p; ++r) checked.push_back(r);

  for (int r : checked) {
    const Buffer& result = results[static_cast<size_t>(r)];
    ++v.checked_ranks;
    // reduce-scatter: rank r holds only chunk r; the ranks hold no common result to compare
    Chunk part{0, n};
    if (collective == Collective::reduce_scatter) part = chunks[static_cast<size_t>(r)];
    else if (std::memcmp(result.data(), shape.data(), n * sizeof(T)) != 0) v.bitwise_identical = false;
    const T* got = result.as<T>();
    for (size_t i = part.offset; i < part.offset + part.count; ++i) {
      const W error = std::fabs(static_cast<W>(got[i]) - ref.value[i]);
      v.max_error = std::max(v.max_error, static_cast<double>(error));
      const W allowed = copies ? 0 : tolerance<T>(op, p, ref.value[i], ref.magnitude[i]);
      if (!(error <= allowed) && v.verified) {
        v.verified = false;
        v.failure = fmt::format("rank {} element {}: got {}, expected {} (allowed error {})", r, i,
                                static_cast<double>(got[i]), static_cast<double>(ref.value[i]),
                                static_cast<double>(allowed));
      }
    }
  }
  return v;
}

}  // namespace

Verification verify_results(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                            const InputFn& input) {
  switch (results[static_cast<size_t>(root)].dtype()) {
    case Dtype::float32: return verify_typed<float>(collective, op, root, results, input);
    case Dtype::float64: return verify_typed<double>(collective, op, root, results, input);
    case Dtype::int32: return verify_typed<int32_t>(collective, op, root, results, input);
  }
  return {};
}

}  // namespace collsim
