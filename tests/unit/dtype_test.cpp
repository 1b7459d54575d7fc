// The new element types against reference implementations written here: every 16-bit
// pattern decoded by its format's definition, a float rounded to the nearest of them (ties
// to the even pattern) by search, and integer arithmetic modulo 2^bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "comm/reduce_op.hpp"

using namespace collsim;

namespace {

// A 16-bit float format: sign, `exponent_bits`, `mantissa_bits`, IEEE-style bias,
// subnormals, infinities and NaNs (all-ones exponent).
struct Format {
  int exponent_bits, mantissa_bits;

  double decode(uint16_t bits) const {
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
    const int mantissa = bits & ((1 << mantissa_bits) - 1);
    const double sign = (bits & 0x8000) ? -1 : 1;
    if (exponent == (1 << exponent_bits) - 1) return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
    return sign * std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
  }

  // Round to nearest, ties to the even pattern; beyond the largest finite value by half a
  // step or more: infinity (IEEE 754 roundTiesToEven).
  uint16_t round(double value) const {
    const std::map<double, uint16_t>& finite = positive_values();
    const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    const double magnitude = std::fabs(value);
    const auto largest = std::prev(finite.end());
    const double step = largest->first - std::prev(largest)->first;
    if (magnitude >= largest->first + step / 2) return sign | static_cast<uint16_t>(((1 << exponent_bits) - 1) << mantissa_bits);
    auto above = finite.lower_bound(magnitude);
    if (above == finite.end()) return sign | largest->second;
    if (above->first == magnitude || above == finite.begin()) return sign | above->second;
    const auto below = std::prev(above);
    const double down = magnitude - below->first, up = above->first - magnitude;
    if (down < up) return sign | below->second;
    if (up < down) return sign | above->second;
    return sign | ((below->second & 1) == 0 ? below->second : above->second);
  }

  // Every finite non-negative value -> its pattern (built once per format).
  const std::map<double, uint16_t>& positive_values() const {
    static std::map<std::pair<int, int>, std::map<double, uint16_t>> tables;
    auto& finite = tables[{exponent_bits, mantissa_bits}];
    if (finite.empty())
      for (uint32_t bits = 0; bits < 0x8000; ++bits) {
        const double v = decode(static_cast<uint16_t>(bits));
        if (std::isfinite(v)) finite.emplace(v, static_cast<uint16_t>(bits));
      }
    return finite;
  }
};

const Format binary16{5, 10}, bfloat16{8, 7};

// Values that probe every branch: halfway points, the largest finite values and the step
// beyond, subnormals, zeros, and random floats over many binades.
std::vector<float> probes(const Format& format) {
  std::vector<float> values{0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e-8f, 3e-8f,
                            6.1e-5f, 6.09e-5f, 1e30f, -3.4e38f, 3.3961775e38f, 1.0e-40f};
  for (uint32_t bits = 1; bits < 0x7c00; bits += 97) {
    // the exact midpoint between two neighbours, and a hair either side
    const double a = format.decode(static_cast<uint16_t>(bits)), b = format.decode(static_cast<uint16_t>(bits + 1));
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    const auto mid = static_cast<float>((a + b) / 2);
    values.insert(values.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), -mid});
  }
  std::mt19937 random(7);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::uniform_int_distribution<int> binade(-30, 20);
  for (int i = 0; i < 3000; ++i) values.push_back(std::ldexp(unit(random), binade(random)));
  return values;
}

}  // namespace

// Every pattern decodes to the reference's value; every probe rounds to the reference's
// pattern (up to `largest` in magnitude).
template <typename Half>
void check_against(const Format& format, float largest) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double want = format.decode(static_cast<uint16_t>(bits));
    Half h;
    h.bits = static_cast<uint16_t>(bits);
    if (std::isnan(want)) CHECK(std::isnan(static_cast<float>(h)));
    else CHECK(static_cast<double>(static_cast<float>(h)) == want);
  }
  for (float value : probes(format)) {
    if (std::fabs(value) > largest) continue;
    CAPTURE(value);
    CHECK(Half(value).bits == format.round(value));
  }
}

TEST_CASE("float16: conversion rounds to nearest even, as the reference does, and decodes every pattern") {
  check_against<Float16>(binary16, INFINITY);
}

TEST_CASE("bfloat16: conversion rounds to nearest even, as the reference does, and decodes every pattern") {
  check_against<Bfloat16>(bfloat16, 3.3e38f);  // the reference's table stops at float's range
}

TEST_CASE("16-bit float reductions: each addition and product rounded to the type (through float)") {
  std::mt19937 random(11);
  std::uniform_real_distribution<float> values(-3, 3);
  for (Dtype dtype : {Dtype::bfloat16, Dtype::float16}) {
    const Format& format = dtype == Dtype::bfloat16 ? bfloat16 : binary16;
    for (OpKind op : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(op_name(op));
      Buffer into(dtype, 200), from(dtype, 200);
      for (size_t i = 0; i < 200; ++i) {
        into.set(i, values(random));
        from.set(i, values(random));
      }
      std::vector<uint16_t> want;
      for (size_t i = 0; i < 200; ++i) {
        const auto a = static_cast<float>(into.get(i)), b = static_cast<float>(from.get(i));
        const float exact = op == OpKind::sum ? a + b : op == OpKind::prod ? a * b : op == OpKind::min ? std::min(a, b) : std::max(a, b);
        want.push_back(format.round(exact));
      }
      ReduceOp(op, dtype).combine(into.all(), from.all());
      const auto* got = reinterpret_cast<const uint16_t*>(into.data());
      for (size_t i = 0; i < 200; ++i) CHECK(got[i] == want[i]);
    }
  }
}

TEST_CASE("integer reductions wrap around modulo 2^bits, avg truncates after the sum") {
  // int8: 100 + 100 = 200 - 256 = -56; -100 + -100 = 56; 100 x 3 = 300 - 256 = 44
  Buffer a(Dtype::int8, 3), b(Dtype::int8, 3);
  const long double xs[] = {100, -100, 100}, ys[] = {100, -100, 3};
  for (size_t i = 0; i < 3; ++i) {
    a.set(i, xs[i]);
    b.set(i, ys[i]);
  }
  ReduceOp(OpKind::sum, Dtype::int8).combine(a.view(0, 2), b.view(0, 2));
  ReduceOp(OpKind::prod, Dtype::int8).combine(a.view(2, 1), b.view(2, 1));
  CHECK(a.get(0) == -56);
  CHECK(a.get(1) == 56);
  CHECK(a.get(2) == 44);
  // uint8: 200 + 100 = 44; max and min as unsigned
  Buffer u(Dtype::uint8, 2), v(Dtype::uint8, 2);
  u.set(0, 200);
  v.set(0, 100);
  u.set(1, 250);
  v.set(1, 3);
  ReduceOp(OpKind::sum, Dtype::uint8).combine(u.view(0, 1), v.view(0, 1));
  ReduceOp(OpKind::max, Dtype::uint8).combine(u.view(1, 1), v.view(1, 1));
  CHECK(u.get(0) == 44);
  CHECK(u.get(1) == 250);
  // int64: wraps at 2^63 like the others
  Buffer big(Dtype::int64, 1), one(Dtype::int64, 1);
  big.as<int64_t>()[0] = INT64_MAX;
  one.as<int64_t>()[0] = 1;
  ReduceOp(OpKind::sum, Dtype::int64).combine(big.all(), one.all());
  CHECK(big.as<int64_t>()[0] == INT64_MIN);
  // avg: a divisor larger than the type holds
  Buffer s(Dtype::int8, 1);
  s.set(0, -100);
  ReduceOp(OpKind::avg, Dtype::int8).finalize(s.all(), 1024);
  CHECK(s.get(0) == 0);
  s.set(0, 100);
  ReduceOp(OpKind::avg, Dtype::int8).finalize(s.all(), 3);
  CHECK(s.get(0) == 33);
}

TEST_CASE("every dtype has a name, a size, and parses back") {
  const std::map<std::string, size_t> sizes{{"float32", 4}, {"float64", 8}, {"int32", 4}, {"bfloat16", 2},
                                            {"float16", 2}, {"int8", 1},    {"uint8", 1}, {"int64", 8}};
  CHECK(dtype_names().size() == sizes.size());
  for (const auto& name : dtype_names()) {
    CAPTURE(name);
    const Dtype dtype = parse_dtype(name, "collective.dtype");
    CHECK(dtype_name(dtype) == name);
    CHECK(dtype_size(dtype) == sizes.at(name));
  }
}
