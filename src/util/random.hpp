#pragma once
// splitmix64: a fast, well-mixed hash, so that generated data depends only on
// (seed, what, index) and never on the order in which it is generated.
#include <cstddef>
#include <cstdint>

namespace collsim {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 53 bits.
inline double unit_interval(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// A digest of bytes (FNV-1a, with the offset basis the trace's model_hash has always used).
inline uint64_t hash_bytes(const void* data, size_t bytes) {
  uint64_t hash = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

}  // namespace collsim
