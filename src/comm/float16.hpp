#pragma once
// The 16-bit floating-point types of GPU training, held as their bits. Arithmetic goes
// through float and each result is rounded back to the nearest value, ties to even, as
// CUDA's __float2half_rn and __float2bfloat16_rn do, and so NCCL's reductions.
//   bfloat16: 1 sign, 8 exponent, 7 mantissa bits (float's range, epsilon 2^-7)
//   float16:  1 sign, 5 exponent, 10 mantissa bits (IEEE binary16, up to 65504, epsilon 2^-10)
#include <bit>
#include <cmath>
#include <cstdint>

namespace collsim {

struct Bfloat16 {
  uint16_t bits = 0;
  Bfloat16() = default;
  explicit Bfloat16(float value);
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
  static constexpr double epsilon = 0.0078125;  // 2^-7
};

struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float value);
  operator float() const;
  static constexpr double epsilon = 0.0009765625;     // 2^-10
  static constexpr double denorm_min = 5.9604644775390625e-08;  // 2^-24
};

inline Bfloat16::Bfloat16(float value) {
  const uint32_t u = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) {
    bits = static_cast<uint16_t>((u >> 16) | 0x40);  // stays a (quiet) NaN
    return;
  }
  // add half of the dropped 16 bits' weight, less one when the kept last bit is even
  bits = static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

inline Float16::Float16(float value) {
  const uint32_t u = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t magnitude = u & 0x7fffffff;
  if (magnitude > 0x7f800000) {  // NaN
    bits = sign | 0x7e00;
  } else if (magnitude >= 0x477ff000) {  // 65520 and above round to infinity
    bits = sign | 0x7c00;
  } else if (magnitude < 0x38800000) {  // below 2^-14: a subnormal, in units of 2^-24
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // exact
    bits = sign | static_cast<uint16_t>(std::nearbyint(scaled));          // ties to even
  } else {
    magnitude -= 112u << 23;  // exponent bias 127 -> 15
    bits = sign | static_cast<uint16_t>((magnitude + 0xfff + ((magnitude >> 13) & 1)) >> 13);
  }
}

inline Float16::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace collsim
