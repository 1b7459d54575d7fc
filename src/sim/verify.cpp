#include "sim/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "algorithms/chunks.hpp"

namespace collsim {
namespace {

// The reference is accumulated in a wider type than the data: double for the 32- and
// 16-bit floats, long double for float64. Integers are reduced modulo 2^64 (then wrapped
// to the type, as the type's own arithmetic wraps) and compared as doubles.
template <typename T>
using Wide = std::conditional_t<std::is_same_v<T, double>, long double, double>;

template <typename T>
constexpr bool is_float16 = std::is_same_v<T, Bfloat16> || std::is_same_v<T, Float16>;

template <typename T>
double epsilon_of() {
  if constexpr (is_float16<T>) return T::epsilon;
  else return std::numeric_limits<T>::epsilon();
}

// What a 16-bit float may lose per rounding besides the relative error: its smallest
// subnormal (the spacing near zero).
template <typename T>
double absolute_slack_of() {
  if constexpr (std::is_same_v<T, Float16>) return Float16::denorm_min;
  else if constexpr (std::is_same_v<T, Bfloat16>) return std::ldexp(1.0, -133);
  else return 0;
}

// An empty buffer shaped as `shape` (as many carried and logical elements), for an input.
Buffer shaped_as(const Buffer& shape) { return Buffer(shape.dtype(), shape.carried(), shape.size()); }

// Integer reductions modulo 2^64: what the type's wrapping arithmetic gives modulo 2^bits.
template <typename T>
std::vector<double> reduce_integers(OpKind op, int p, const Buffer& shape, const InputFn& input) {
  const size_t n = shape.carried();
  std::vector<uint64_t> wrapped(n);
  std::vector<int64_t> extreme(n);
  Buffer in = shaped_as(shape);
  for (int r = 0; r < p; ++r) {
    input(r, in);
    const T* x = in.as<T>();
    for (size_t i = 0; i < n; ++i) {
      const auto v = static_cast<int64_t>(x[i]);
      if (r == 0) {
        wrapped[i] = static_cast<uint64_t>(v);
        extreme[i] = v;
      } else if (op == OpKind::sum || op == OpKind::avg) {
        wrapped[i] += static_cast<uint64_t>(v);
      } else if (op == OpKind::prod) {
        wrapped[i] *= static_cast<uint64_t>(v);
      } else {
        extreme[i] = op == OpKind::min ? std::min(extreme[i], v) : std::max(extreme[i], v);
      }
    }
  }
  std::vector<double> value(n);
  for (size_t i = 0; i < n; ++i) {
    const auto result = static_cast<int64_t>(static_cast<T>(wrapped[i]));  // modulo 2^bits
    if (op == OpKind::min || op == OpKind::max) value[i] = static_cast<double>(extreme[i]);
    else if (op == OpKind::avg) value[i] = static_cast<double>(result / p);
    else value[i] = static_cast<double>(result);
  }
  return value;
}

template <typename T>
struct Reference {
  std::vector<Wide<T>> value;
  std::vector<Wide<T>> magnitude;  // sum of |x| over ranks, for the rounding bound
};

template <typename T>
Reference<T> reduce_floats(OpKind op, int p, const Buffer& shape, const InputFn& input) {
  using W = Wide<T>;
  const size_t n = shape.carried();
  Reference<T> ref{std::vector<W>(n), std::vector<W>(n, 0)};
  Buffer in = shaped_as(shape);
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
    for (W& v : ref.value) v = v / p;
  return ref;
}

template <typename T>
Reference<T> reduce_reference(OpKind op, int p, const Buffer& shape, const InputFn& input) {
  if constexpr (std::is_integral_v<T>) return {reduce_integers<T>(op, p, shape, input), {}};
  else return reduce_floats<T>(op, p, shape, input);
}

template <typename T>
Wide<T> tolerance(OpKind op, int p, Wide<T> value, Wide<T> magnitude) {
  if constexpr (std::is_integral_v<T>) return 0;
  const Wide<T> eps = epsilon_of<T>(), slack = (p - 1) * absolute_slack_of<T>();
  switch (op) {
    case OpKind::sum: return (p - 1) * eps * magnitude + slack;
    case OpKind::avg: return (p - 1) * eps * magnitude / p + eps * std::fabs(value) + slack;
    case OpKind::prod: return p * eps * std::fabs(value) * 1.01;
    case OpKind::min:
    case OpKind::max: return 0;
  }
  return 0;
}

template <typename T>
std::string describe_tolerance(OpKind op, int p, bool copies) {
  if (copies) return "bit for bit";
  if (std::is_integral_v<T> || op == OpKind::min || op == OpKind::max || p == 1) return "exact";
  const std::string eps = fmt::format("epsilon 2^{}", static_cast<int>(std::lround(std::log2(epsilon_of<T>()))));
  const std::string slack = absolute_slack_of<T>() > 0 ? " + the smallest subnormal each" : "";
  switch (op) {
    case OpKind::sum: return fmt::format("{} additions x {} x sum|x|{}", p - 1, eps, slack);
    case OpKind::avg: return fmt::format("{} additions x {} x sum|x| / {} + {} x |avg|{}", p - 1, eps, p, eps, slack);
    case OpKind::prod: return fmt::format("{} multiplications x {} x |prod| (+1%)", p, eps);
    case OpKind::min:
    case OpKind::max: break;
  }
  return "exact";
}

// Alltoall moves data: rank r's block j must be, bit for bit, rank j's block r, and the
// elements past the p blocks rank r's own. No two ranks hold the same result. Each rank's
// input is made once and checked against every result (one input in memory at a time,
// not p); the failure reported is the first in rank and element order.
template <typename T>
Verification verify_alltoall(const std::vector<Buffer>& results, const InputFn& input) {
  Verification v;
  v.tolerance = "bit for bit";
  const int p = static_cast<int>(results.size());
  const size_t n = results.front().carried();
  const size_t block = n / static_cast<size_t>(p);  // in carried elements, as Buffer::block lays them out
  const size_t blocks_end = block * static_cast<size_t>(p);
  std::pair<int, size_t> first_failure{p, 0};
  Buffer owned = shaped_as(results.front());
  for (int owner = 0; owner < p; ++owner) {
    input(owner, owned);
    const T* source = owned.as<T>();
    for (int r = 0; r < p; ++r) {
      const T* got = results[static_cast<size_t>(r)].as<T>();
      // rank r's block `owner` is the owner's block r; the tail past the blocks is r's own
      auto check = [&](size_t i, size_t at) {
        if (std::memcmp(&got[i], &source[at], sizeof(T)) == 0) return;
        ++v.wrong_elements;
        if (std::pair{r, i} >= first_failure) return;
        first_failure = {r, i};
        v.verified = false;
        v.max_error = std::fabs(static_cast<double>(got[i]) - static_cast<double>(source[at]));
        v.failure = fmt::format("rank {} element {}: got {}, expected {} (rank {}'s element {})", r, i,
                                static_cast<double>(got[i]), static_cast<double>(source[at]), owner, at);
      };
      const size_t from = static_cast<size_t>(r) * block;
      for (size_t k = 0; k < block; ++k) check(static_cast<size_t>(owner) * block + k, from + k);
      if (r == owner)
        for (size_t i = blocks_end; i < n; ++i) check(i, i);
    }
  }
  v.checked_ranks = p;
  return v;
}

// What every checked rank must hold (and the magnitudes its tolerance is taken from): the
// root's input (broadcast), chunk j of rank j's input in chunk j (allgather), else the
// reduction of every rank's input in higher precision.
// Rank j's chunk (reduce-scatter, allgather): chunk j of the logical elements, in carried ones.
std::vector<Chunk> carried_chunks(const Buffer& shape, int p) {
  std::vector<Chunk> chunks;
  for (const Chunk& c : split_evenly(shape.size(), p))
    chunks.push_back({shape.map().at(c.offset), shape.map().at(c.offset + c.count) - shape.map().at(c.offset)});
  return chunks;
}

template <typename T>
Reference<T> reference_of(Collective collective, OpKind op, int root, int p, const Buffer& shape, const InputFn& input) {
  using W = Wide<T>;
  const size_t n = shape.carried();
  Reference<T> ref;
  if (collective == Collective::broadcast) {
    Buffer original = shaped_as(shape);
    input(root, original);
    for (size_t i = 0; i < n; ++i) ref.value.push_back(static_cast<W>(original.as<T>()[i]));
  } else if (collective == Collective::allgather) {
    const auto chunks = carried_chunks(shape, p);
    ref.value.resize(n);
    Buffer original = shaped_as(shape);
    for (int j = 0; j < p; ++j) {
      input(j, original);
      const Chunk& c = chunks[static_cast<size_t>(j)];
      for (size_t i = c.offset; i < c.offset + c.count; ++i) ref.value[i] = static_cast<W>(original.as<T>()[i]);
    }
  } else {
    ref = reduce_reference<T>(op, p, shape, input);
  }
  return ref;
}

template <typename T>
Verification verify_typed(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                          const InputFn& input) {
  using W = Wide<T>;
  if (collective == Collective::alltoall) return verify_alltoall<T>(results, input);
  Verification v;
  const int p = static_cast<int>(results.size());
  const Buffer& shape = results[static_cast<size_t>(root)];
  const size_t n = shape.carried();

  // Broadcast and allgather copy data: the result must equal the inputs bit for bit.
  const bool copies = collective == Collective::broadcast || collective == Collective::allgather;
  const std::vector<Chunk> chunks = carried_chunks(shape, p);
  const Reference<T> ref = reference_of<T>(collective, op, root, p, shape, input);

  v.tolerance = describe_tolerance<T>(op, p, copies);
  auto allowed_at = [&](size_t i) -> W {
    return copies ? 0 : tolerance<T>(op, p, ref.value[i], ref.magnitude.empty() ? 0 : ref.magnitude[i]);
  };
  std::vector<int> checked;
  if (collective == Collective::reduce) checked.push_back(root);
  else for (int r = 0; r < p; ++r) checked.push_back(r);

  // The errors of one rank's result over `part`: their largest, how many exceed the
  // tolerance, and the first that does (when `wrong` > 0).
  struct Errors {
    double max_error = 0;
    size_t wrong = 0, first_wrong = 0;
  };
  auto errors_of = [&](const T* got, Chunk part) {
    Errors e;
    for (size_t i = part.offset; i < part.offset + part.count; ++i) {
      const W error = std::fabs(static_cast<W>(got[i]) - ref.value[i]);
      e.max_error = std::max(e.max_error, static_cast<double>(error));
      if (error <= allowed_at(i)) continue;
      if (e.wrong++ == 0) e.first_wrong = i;
    }
    return e;
  };
  // A rank whose result is the shape's bit for bit has the shape's errors: they are
  // computed once (a ring of 1 GiB at p = 256 checked 4 Mi elements, one rank's 16 Ki
  // each time over: its verification went from 293 to 118 M instructions).
  std::optional<Errors> shape_errors;
  for (int r : checked) {
    const Buffer& result = results[static_cast<size_t>(r)];
    ++v.checked_ranks;
    // reduce-scatter: rank r holds only chunk r; the ranks hold no common result to compare
    Errors e;
    if (collective == Collective::reduce_scatter) {
      e = errors_of(result.as<T>(), chunks[static_cast<size_t>(r)]);
    } else if (std::memcmp(result.data(), shape.data(), n * sizeof(T)) != 0) {
      v.bitwise_identical = false;
      e = errors_of(result.as<T>(), Chunk{0, n});
    } else {
      if (!shape_errors) shape_errors = errors_of(shape.as<T>(), Chunk{0, n});
      e = *shape_errors;
    }
    v.max_error = std::max(v.max_error, e.max_error);
    v.wrong_elements += e.wrong;
    if (e.wrong > 0 && v.verified) {
      const size_t i = e.first_wrong;
      v.verified = false;
      v.failure = fmt::format("rank {} element {}: got {}, expected {} (allowed error {})", r, i,
                              static_cast<double>(result.as<T>()[i]), static_cast<double>(ref.value[i]),
                              static_cast<double>(allowed_at(i)));
    }
  }
  return v;
}

}  // namespace

Verification verify_results(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                            const InputFn& input) {
  return with_element_type(results[static_cast<size_t>(root)].dtype(), [&](auto element) {
    return verify_typed<decltype(element)>(collective, op, root, results, input);
  });
}

void merge_verification(Verification& merged, const Verification& one, const std::string& where) {
  merged.max_error = std::max(merged.max_error, one.max_error);
  merged.wrong_elements += one.wrong_elements;
  merged.bitwise_identical = merged.bitwise_identical && one.bitwise_identical;
  merged.tolerance = one.tolerance;
  if (!one.verified && merged.verified) {
    merged.verified = false;
    merged.failure = where + ": " + one.failure;
  }
}

}  // namespace collsim
