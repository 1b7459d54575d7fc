#pragma once
// Compute noise (training.noise): each rank's computation in each iteration takes its nominal
// time times a factor drawn from a named distribution, seeded: the factor depends only on
// (seed, rank, round), never on the order in which ranks ask, so the same scenario gives the
// same times to the last digit. Real clusters jitter (clock boost, memory stalls, the OS);
// with many ranks the iteration waits for the slowest, and a tail that one worker rarely
// meets is met by some worker almost every iteration.
#include <cstdint>
#include <vector>

#include "util/named_enum.hpp"

namespace collsim {

enum class NoiseDistribution { none, normal, lognormal, table };
const NamedEnum<NoiseDistribution>& noise_distribution_names();

// A measured tail: the factor at each cumulative probability, in increasing order, from
// probability 0 (the fastest) to 1 (the slowest); between two points the quantile function
// is linear.
struct TailPoint {
  double probability = 0, factor = 1;
};

struct NoiseSpec {
  NoiseDistribution distribution = NoiseDistribution::none;
  // normal: factor = max(0, 1 + sigma Z) (sigma: the relative standard deviation);
  // lognormal: factor = exp(sigma Z - sigma^2 / 2) (sigma of the log; mean 1).
  double sigma = 0;
  std::vector<TailPoint> table;  // table: the quantile function

  bool active() const { return distribution != NoiseDistribution::none; }
};

// The factor by which rank `rank`'s computation of round `round` is stretched (1: nominal).
double compute_noise(const NoiseSpec& noise, uint64_t seed, int rank, int round);

// The mean factor of the distribution (normal: of the untruncated 1 + sigma Z, 1; lognormal: 1;
// table: the quantile function's integral).
double noise_mean(const NoiseSpec& noise);

}  // namespace collsim
