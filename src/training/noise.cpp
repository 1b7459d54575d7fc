#include "training/noise.hpp"

#include <algorithm>
#include <cmath>

#include "util/random.hpp"

namespace collsim {
namespace {

// A standard normal draw from two uniforms (Box-Muller), each a hash of (seed, rank, round):
// independent of the order of the draws.
double standard_normal(uint64_t seed, int rank, int round) {
  const uint64_t key = splitmix64(seed ^ 0x6e6f697365ULL) ^ splitmix64((static_cast<uint64_t>(rank) << 32) |
                                                                        static_cast<uint32_t>(round));
  const double u1 = 1 - unit_interval(splitmix64(key));  // (0, 1]: the log is finite
  const double u2 = unit_interval(splitmix64(key + 1));
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

double uniform(uint64_t seed, int rank, int round) {
  return unit_interval(splitmix64(splitmix64(seed ^ 0x7461696cULL) ^ splitmix64((static_cast<uint64_t>(rank) << 32) |
                                                                                 static_cast<uint32_t>(round))));
}

double quantile(const std::vector<TailPoint>& table, double u) {
  for (size_t i = 1; i < table.size(); ++i) {
    const TailPoint& a = table[i - 1];
    const TailPoint& b = table[i];
    if (u <= b.probability) {
      if (b.probability <= a.probability) return b.factor;
      return a.factor + (b.factor - a.factor) * (u - a.probability) / (b.probability - a.probability);
    }
  }
  return table.back().factor;
}

}  // namespace

const NamedEnum<NoiseDistribution>& noise_distribution_names() {
  static const NamedEnum<NoiseDistribution> table{"distribution",
                                                  {{NoiseDistribution::none, "none"},
                                                   {NoiseDistribution::normal, "normal"},
                                                   {NoiseDistribution::lognormal, "lognormal"},
                                                   {NoiseDistribution::table, "table"}}};
  return table;
}

double compute_noise(const NoiseSpec& noise, uint64_t seed, int rank, int round) {
  switch (noise.distribution) {
    case NoiseDistribution::none: return 1;
    case NoiseDistribution::normal: return std::max(0.0, 1 + noise.sigma * standard_normal(seed, rank, round));
    case NoiseDistribution::lognormal:
      return std::exp(noise.sigma * standard_normal(seed, rank, round) - noise.sigma * noise.sigma / 2);
    case NoiseDistribution::table: return quantile(noise.table, uniform(seed, rank, round));
  }
  return 1;
}

double noise_mean(const NoiseSpec& noise) {
  if (noise.distribution != NoiseDistribution::table) return 1;
  double mean = 0;  // the area under the piecewise-linear quantile function
  for (size_t i = 1; i < noise.table.size(); ++i)
    mean += (noise.table[i].probability - noise.table[i - 1].probability) *
            (noise.table[i].factor + noise.table[i - 1].factor) / 2;
  return mean;
}

}  // namespace collsim
