#pragma once
// A real, small model to train: least-squares linear regression on a seeded synthetic
// data set, y = X w* + noise. Each worker owns a contiguous block of rows (its partition,
// fixed by its world rank), computes the gradient of the mean squared error on it, and
// every worker applies the same averaged gradient, so all model copies stay identical.
#include <cstdint>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

class LinearRegression {
public:
  LinearRegression(int parameters, int samples, uint64_t seed);

  int parameters() const { return d_; }
  int samples() const { return n_; }

  // Rows owned by `worker` of `workers` (split as evenly as possible).
  Chunk partition(int worker, int workers) const;

  // Gradient of the mean squared error over `rows`: (2/|rows|) X^T (X w - y).
  void gradient(const std::vector<double>& weights, Chunk rows, std::vector<double>& out) const;

  // Mean squared error over all rows.
  double loss(const std::vector<double>& weights) const;

private:
  int d_, n_;
  std::vector<double> x_;  // n x d, row-major
  std::vector<double> y_;
};

}  // namespace collsim
