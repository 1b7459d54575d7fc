#include <doctest/doctest.h>

#include "comm/reduce_op.hpp"
#include "util/errors.hpp"

using namespace collsim;

namespace {
Buffer make(Dtype dtype, std::initializer_list<long double> values) {
  Buffer b(dtype, values.size());
  size_t i = 0;
  for (long double v : values) b.set(i++, v);
  return b;
}
}  // namespace

TEST_CASE("combine for each op and dtype") {
  for (Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::int32}) {
    CAPTURE(dtype_name(dtype));
    const std::pair<OpKind, std::vector<long double>> cases[] = {{OpKind::sum, {5, -1, 6}},
                                                                  {OpKind::prod, {6, -6, 0}},
                                                                  {OpKind::min, {2, -3, 0}},
                                                                  {OpKind::max, {3, 2, 6}}};
    for (const auto& [op, want] : cases) {
      Buffer a = make(dtype, {2, -3, 6});
      Buffer b = make(dtype, {3, 2, 0});
      ReduceOp(op, dtype).combine(a.all(), b.all());
      for (size_t i = 0; i < 3; ++i) CHECK(a.get(i) == want[i]);
    }
  }
}

TEST_CASE("avg sums, then divides once by the group size") {
  Buffer a = make(Dtype::float32, {1, 2});
  Buffer b = make(Dtype::float32, {2, 2});
  const ReduceOp avg(OpKind::avg, Dtype::float32);
  avg.combine(a.all(), b.all());
  avg.finalize(a.all(), 2);
  CHECK(a.get(0) == 1.5);
  CHECK(a.get(1) == 2);
  Buffer i = make(Dtype::int32, {7});
  ReduceOp(OpKind::avg, Dtype::int32).finalize(i.all(), 2);
  CHECK(i.get(0) == 3);
}

TEST_CASE("unknown op and dtype names") {
  CHECK_THROWS_WITH_AS(parse_op("summ", "collective.op"),
                       "collective.op: unknown op 'summ' (did you mean 'sum'?); allowed: sum, prod, min, max, avg",
                       InputError);
  CHECK_THROWS_AS(parse_dtype("fp8", "collective.dtype"), InputError);
  CHECK(parse_dtype("int32", "f") == Dtype::int32);
  // PyTorch's and NCCL's names (torch.half, ncclFloat, ...)
  CHECK(parse_dtype("fp16", "f") == Dtype::float16);
  CHECK(parse_dtype("half", "f") == Dtype::float16);
  CHECK(parse_dtype("bf16", "f") == Dtype::bfloat16);
  CHECK(parse_dtype("float", "f") == Dtype::float32);
  CHECK(parse_dtype("double", "f") == Dtype::float64);
}
