#include "training/linear_regression.hpp"

#include <cmath>

#include "util/random.hpp"

namespace collsim {
namespace {

// Uniform in [-1, 1).
double uniform(uint64_t seed, uint64_t index) {
  return 2.0 * unit_interval(splitmix64(seed ^ splitmix64(index))) - 1.0;
}

}  // namespace

LinearRegression::LinearRegression(int parameters, int samples, uint64_t seed)
    : d_(parameters), n_(samples), x_(static_cast<size_t>(parameters) * static_cast<size_t>(samples)),
      y_(static_cast<size_t>(samples)) {
  const auto d = static_cast<size_t>(d_);
  std::vector<double> truth(d);
  for (size_t j = 0; j < d; ++j) truth[j] = uniform(seed + 1, j);
  for (size_t i = 0; i < static_cast<size_t>(n_); ++i) {
    double dot = 0;
    for (size_t j = 0; j < d; ++j) {
      // Features scaled by 1/sqrt(d) keep X^T X well conditioned for a fixed step size.
      x_[i * d + j] = uniform(seed + 2, i * d + j) / std::sqrt(static_cast<double>(d));
      dot += x_[i * d + j] * truth[j];
    }
    y_[i] = dot + 0.01 * uniform(seed + 3, i);
  }
}

Chunk LinearRegression::partition(int worker, int workers) const {
  return split_evenly(static_cast<size_t>(n_), workers)[static_cast<size_t>(worker)];
}

void LinearRegression::gradient(const std::vector<double>& weights, Chunk rows, std::vector<double>& out) const {
  const auto d = static_cast<size_t>(d_);
  out.assign(d, 0.0);
  for (size_t i = rows.offset; i < rows.offset + rows.count; ++i) {
    const double* row = &x_[i * d];
    double residual = -y_[i];
    for (size_t j = 0; j < d; ++j) residual += row[j] * weights[j];
    for (size_t j = 0; j < d; ++j) out[j] += 2.0 * residual * row[j];
  }
  if (rows.count > 0)
    for (double& g : out) g /= static_cast<double>(rows.count);
}

double LinearRegression::loss(const std::vector<double>& weights) const {
  const auto d = static_cast<size_t>(d_);
  double total = 0;
  for (size_t i = 0; i < static_cast<size_t>(n_); ++i) {
    double residual = -y_[i];
    for (size_t j = 0; j < d; ++j) residual += x_[i * d + j] * weights[j];
    total += residual * residual;
  }
  return total / n_;
}

}  // namespace collsim
