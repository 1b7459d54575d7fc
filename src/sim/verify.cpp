#include "sim/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace collsim {
namespace {

long double epsilon(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return std::numeric_limits<float>::epsilon();
    case Dtype::float64: return std::numeric_limits<double>::epsilon();
    case Dtype::int32: return 0;
  }
  return 0;
}

struct Reference {
  std::vector<long double> value;
  std::vector<long double> magnitude;  // sum of |x| over ranks, for the rounding bound
};

Reference reduce_reference(OpKind op, int p, const Buffer& shape, const InputFn& input) {
  const size_t n = shape.size();
  Reference ref{std::vector<long double>(n), std::vector<long double>(n, 0)};
  Buffer in(shape.dtype(), n);
  for (int r = 0; r < p; ++r) {
    input(r, in);
    for (size_t i = 0; i < n; ++i) {
      const long double x = in.get(i);
      long double& v = ref.value[i];
      if (r == 0) v = x;
      else if (op == OpKind::sum || op == OpKind::avg) v += x;
      else if (op == OpKind::prod) v *= x;
      else if (op == OpKind::min) v = std::min(v, x);
      else v = std::max(v, x);
      ref.magnitude[i] += std::fabs(x);
    }
  }
  if (op == OpKind::avg) {
    for (long double& v : ref.value)
      v = shape.dtype() == Dtype::int32 ? std::trunc(v / p) : v / p;
  }
  return ref;
}

long double tolerance(OpKind op, Dtype dtype, int p, long double value, long double magnitude) {
  const long double eps = epsilon(dtype);
  switch (op) {
    case OpKind::sum: return (p - 1) * eps * magnitude;
    case OpKind::avg: return (p - 1) * eps * magnitude / p + eps * std::fabs(value);
    case OpKind::prod: return p * eps * std::fabs(value) * 1.01L;
    case OpKind::min:
    case OpKind::max: return 0;
  }
  return 0;
}

}  // namespace

Verification verify_results(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                            const InputFn& input) {
  Verification v;
  const int p = static_cast<int>(results.size());
  const Buffer& shape = results[static_cast<size_t>(root)];
  const size_t n = shape.size();

  Reference ref;
  if (collective == Collective::broadcast) {
    Buffer original(shape.dtype(), n);
    input(root, original);
    ref.value.resize(n);
    ref.magnitude.assign(n, 0);
    for (size_t i = 0; i < n; ++i) ref.value[i] = original.get(i);
  } else {
    ref = reduce_reference(op, p, shape, input);
  }

  std::vector<int> checked;
  if (collective == Collective::reduce) checked.push_back(root);
  else for (int r = 0; r < p; ++r) checked.push_back(r);

  for (int r : checked) {
    const Buffer& result = results[static_cast<size_t>(r)];
    ++v.checked_ranks;
    if (std::memcmp(result.data(), shape.data(), n * shape.elem_bytes()) != 0) v.bitwise_identical = false;
    for (size_t i = 0; i < n; ++i) {
      const long double error = std::fabs(result.get(i) - ref.value[i]);
      v.max_error = std::max(v.max_error, static_cast<double>(error));
      const long double allowed =
          collective == Collective::broadcast ? 0 : tolerance(op, shape.dtype(), p, ref.value[i], ref.magnitude[i]);
      if (!(error <= allowed) && v.verified) {
        v.verified = false;
        v.failure = fmt::format("rank {} element {}: got {}, expected {} (allowed error {})", r, i,
                                static_cast<double>(result.get(i)), static_cast<double>(ref.value[i]),
                                static_cast<double>(allowed));
      }
    }
  }
  return v;
}

}  // namespace collsim
