#include "run/async_verify.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "algorithms/chunks.hpp"
#include "training/linear_regression.hpp"

namespace collsim {
namespace {

// The type's epsilon: each sum of k terms is allowed (k - 1) roundings of it.
long double epsilon_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::float64: return std::ldexp(1.0L, -52);
    case Dtype::bfloat16: return std::ldexp(1.0L, -7);
    case Dtype::float16: return std::ldexp(1.0L, -10);
    default: return std::ldexp(1.0L, -23);
  }
}

// The carried elements of each server's shard, [first, end), in a vector of the run's shape.
std::vector<std::pair<size_t, size_t>> shard_ranges(const SimResult& result) {
  const RunPlan& plan = *result.plan;
  Buffer shape(plan.scenario.collective.dtype, plan.payload.carried_elems, plan.payload.logical_elems);
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const Chunk& shard : split_evenly(plan.payload.logical_elems, plan.model.servers)) {
    const View view = shape.view(shard.offset, shard.count);
    const size_t first = static_cast<size_t>(view.data - shape.data()) / shape.elem_bytes();
    ranges.emplace_back(first, first + view.count);
  }
  return ranges;
}

// (server, worker, round) -> the update, for the pulls each gradient was computed after.
using UpdateIndex = std::map<std::tuple<int, int, int>, const ServerUpdate*>;

UpdateIndex index_updates(const std::vector<ServerUpdate>& updates) {
  UpdateIndex index;
  for (const ServerUpdate& u : updates) index[{u.server, u.worker, u.round}] = &u;
  return index;
}

// Compares one element; keeps the largest error and the first failure.
void check(Verification& v, long double got, long double want, long double allowed, const std::string& where) {
  const long double error = std::fabs(got - want);
  v.max_error = std::max(v.max_error, static_cast<double>(error));
  if (error <= allowed) return;
  ++v.wrong_elements;
  if (v.verified) v.failure = fmt::format("{}: {} where the servers' sequence gives {}", where,
                                          static_cast<double>(got), static_cast<double>(want));
  v.verified = false;
}

// Without a model each push is the worker's input, added to the server's shard: a worker's
// last pull of shard s must be the sum of the pushes server s had applied by its answer.
void verify_sums(const SimResult& result, const UpdateIndex& index, Verification& v) {
  const auto ranges = shard_ranges(result);
  const int p = static_cast<int>(result.results.size()), rounds = result.plan->scenario.training.rounds;
  const long double eps = epsilon_of(result.plan->scenario.collective.dtype);
  std::vector<Buffer> inputs;
  for (int w = 0; w < p; ++w) {
    inputs.push_back(result.results[static_cast<size_t>(w)]);
    result.input_of(w, inputs.back());
  }
  for (size_t s = 0; s < ranges.size(); ++s) {
    const auto [first, end] = ranges[s];
    std::vector<long double> sum(end - first, 0), magnitude(end - first, 0);
    int version = 0;
    // walk the server's sequence; check each worker's last pull at the version it was answered
    std::vector<const ServerUpdate*> sequence;
    for (const ServerUpdate& u : result.updates)
      if (u.server == static_cast<int>(s)) sequence.push_back(&u);
    for (size_t k = 0; k <= sequence.size(); ++k, ++version) {
      for (int w = 0; w < p; ++w) {
        const ServerUpdate* last = index.at({static_cast<int>(s), w, rounds - 1});
        if (last->reply_version != version) continue;
        for (size_t i = first; i < end; ++i)
          check(v, result.results[static_cast<size_t>(w)].get(i), sum[i - first],
                std::max(0, version - 1) * eps * magnitude[i - first],
                fmt::format("rank {} element {} (server {}, after {} pushes)", w, i, s, version));
      }
      if (k == sequence.size()) break;
      const Buffer& input = inputs[static_cast<size_t>(sequence[k]->worker)];
      for (size_t i = first; i < end; ++i) {
        sum[i - first] += input.get(i);
        magnitude[i - first] += std::fabs(input.get(i));
      }
    }
  }
  v.tolerance = "the servers' sequence of pushes replayed, (k-1) epsilon sum|x| for k pushes";
}

// The model the worker computed a gradient on: each server's shard as the worker's pull of
// the round before found it (the model everyone starts from in round 0).
void read_model(const ServerUpdate& u, const UpdateIndex& index, const std::vector<std::pair<size_t, size_t>>& ranges,
                const std::vector<std::vector<std::vector<long double>>>& history, Buffer& carried,
                std::vector<double>& weights) {
  for (size_t s = 0; s < ranges.size(); ++s) {
    const int version = u.round == 0 ? 0 : index.at({static_cast<int>(s), u.worker, u.round - 1})->reply_version;
    for (size_t i = ranges[s].first; i < std::min(ranges[s].second, weights.size()); ++i) {
      carried.set(0, history[s][static_cast<size_t>(version)][i - ranges[s].first]);
      weights[i] = static_cast<double>(carried.get(0));
    }
  }
}

// With a model each push is the gradient of the worker's partition at the model it last
// pulled, and server s applies w_s -= rate / p x g_s: replayed here in long double through the
// servers' sequence, the values the messages carry rounded to the dtype as they round them.
void verify_models(const SimResult& result, const UpdateIndex& index, Verification& v) {
  const Scenario& scenario = result.plan->scenario;
  const int p = static_cast<int>(result.results.size()), rounds = scenario.training.rounds;
  const LinearRegression model(scenario.training.parameters, training_samples(scenario, p), scenario.seed);
  const auto ranges = shard_ranges(result);
  Buffer carried(scenario.collective.dtype, 1);
  std::vector<std::vector<std::vector<long double>>> history;  // [server][version][element of the shard]
  for (const auto& [first, end] : ranges) history.push_back({std::vector<long double>(end - first, 0)});
  const long double rate = static_cast<long double>(scenario.training.learning_rate) / p;
  std::vector<double> weights(static_cast<size_t>(model.parameters()), 0), gradient;
  for (const ServerUpdate& u : result.updates) {
    read_model(u, index, ranges, history, carried, weights);
    model.gradient(weights, model.partition(u.worker, p), gradient);
    const auto [first, end] = ranges[static_cast<size_t>(u.server)];
    std::vector<long double> next = history[static_cast<size_t>(u.server)].back();
    for (size_t i = first; i < std::min(end, gradient.size()); ++i) {
      carried.set(0, gradient[i]);
      next[i - first] -= rate * carried.get(0);
    }
    history[static_cast<size_t>(u.server)].push_back(std::move(next));
  }
  const long double eps = epsilon_of(scenario.collective.dtype);
  for (int w = 0; w < p; ++w)
    for (size_t s = 0; s < ranges.size(); ++s) {
      const int version = index.at({static_cast<int>(s), w, rounds - 1})->reply_version;
      const auto& want = history[s][static_cast<size_t>(version)];
      long double largest = 0;
      for (long double x : want) largest = std::max(largest, std::fabs(x));
      for (size_t i = ranges[s].first; i < std::min(ranges[s].second, weights.size()); ++i)
        check(v, result.results[static_cast<size_t>(w)].get(i), want[i - ranges[s].first],
              (version + 1) * eps * largest,
              fmt::format("rank {} weight {} (server {}, after {} pushes)", w, i, s, version));
    }
  v.tolerance = "the servers' sequence of pushes replayed, (k+1) epsilon max|w| after k pushes";
}

}  // namespace

Verification verify_async(const SimResult& result) {
  Verification v;
  v.checked_ranks = static_cast<int>(result.results.size());
  v.bitwise_identical = false;
  const UpdateIndex index = index_updates(result.updates);
  if (result.plan->scenario.training.has_model()) verify_models(result, index, v);
  else verify_sums(result, index, v);
  return v;
}

}  // namespace collsim
