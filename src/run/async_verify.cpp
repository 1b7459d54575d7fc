#include "run/async_verify.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "sim/async_layout.hpp"
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

// (server, bucket, pusher, round) -> the update, for the pulls each gradient was computed after.
class UpdateIndex {
public:
  explicit UpdateIndex(const std::vector<ServerUpdate>& updates) {
    for (const ServerUpdate& u : updates) index_[{u.server, std::max(u.bucket, 0), u.worker, u.round}] = &u;
  }
  // The version of server s's shard of bucket b that `pusher`'s pull after `round` read (0:
  // the model everyone starts from, before round 0).
  int read(int server, size_t bucket, int pusher, int round) const {
    if (round < 0) return 0;
    return index_.at({server, static_cast<int>(bucket), pusher, round})->reply_version;
  }

private:
  std::map<std::tuple<int, int, int, int>, const ServerUpdate*> index_;
};

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

std::vector<const ServerUpdate*> sequence_of(const SimResult& result, int server) {
  std::vector<const ServerUpdate*> sequence;
  for (const ServerUpdate& u : result.updates)
    if (u.server == server) sequence.push_back(&u);
  return sequence;
}

// One bucket's shard on a server, replayed: the running sum of the pushes applied, the sum of
// their magnitudes and how many inputs went into it.
struct ShardSum {
  std::vector<long double> sum, magnitude;
  int terms = 0;
};

// Without a model each push is its node's inputs added up (one rank's without local
// aggregation), added to the server's shard: each rank's last pull of a bucket's shard must be
// the sum of the pushes of that bucket its server had applied by the answer.
void verify_sums(const SimResult& result, const AsyncLayout& layout, const UpdateIndex& index, Verification& v) {
  const int p = static_cast<int>(result.results.size()), last = result.plan->scenario.training.rounds - 1;
  const long double eps = epsilon_of(result.plan->scenario.collective.dtype);
  std::vector<Buffer> inputs;
  for (int w = 0; w < p; ++w) {
    inputs.push_back(result.results[static_cast<size_t>(w)]);
    result.input_of(w, inputs.back());
  }
  for (int s = 0; s < layout.servers; ++s) {
    std::vector<ShardSum> shards;
    for (const AsyncBucket& bucket : layout.buckets) {
      const auto [first, end] = bucket.carried(s);
      shards.push_back({std::vector<long double>(end - first, 0), std::vector<long double>(end - first, 0), 0});
    }
    // the version each rank's last pull of each bucket read: checked when the replay gets there
    std::multimap<int, std::pair<int, size_t>> pulls;
    for (int w = 0; w < p; ++w)
      for (size_t b = 0; b < layout.buckets.size(); ++b) pulls.insert({index.read(s, b, layout.pusher_of(w), last), {w, b}});
    const std::vector<const ServerUpdate*> sequence = sequence_of(result, s);
    for (size_t version = 0; version <= sequence.size(); ++version) {
      const auto [from, to] = pulls.equal_range(static_cast<int>(version));
      for (auto pull = from; pull != to; ++pull) {
        const auto [w, b] = pull->second;
        const auto first = layout.buckets[b].carried(s).first;
        const ShardSum& shard = shards[b];
        for (size_t i = 0; i < shard.sum.size(); ++i)
          check(v, result.results[static_cast<size_t>(w)].get(first + i), shard.sum[i],
                std::max(0, shard.terms - 1) * eps * shard.magnitude[i],
                fmt::format("rank {} element {} (server {}, after {} pushes)", w, first + i, s, version));
      }
      if (version == sequence.size()) break;
      const ServerUpdate& u = *sequence[version];
      const auto b = static_cast<size_t>(std::max(u.bucket, 0));
      const auto first = layout.buckets[b].carried(s).first;
      ShardSum& shard = shards[b];
      for (int member : layout.nodes[static_cast<size_t>(layout.node_of[static_cast<size_t>(u.worker)])]) {
        for (size_t i = 0; i < shard.sum.size(); ++i) {
          shard.sum[i] += inputs[static_cast<size_t>(member)].get(first + i);
          shard.magnitude[i] += std::fabs(inputs[static_cast<size_t>(member)].get(first + i));
        }
        ++shard.terms;
      }
    }
  }
  v.tolerance = "the servers' sequence of pushes replayed, (k-1) epsilon sum|x| for k inputs added up";
}

// Training a model: each server's weights after each of its pushes, over the weights it
// holds (each bucket's shard, cut at the model's parameters), replayed in long double.
class ModelReplay {
public:
  ModelReplay(const SimResult& result, const AsyncLayout& layout, const UpdateIndex& index)
      : scenario_(result.plan->scenario), layout_(layout), index_(index), p_(static_cast<int>(result.results.size())),
        model_(scenario_.training.parameters, training_samples(scenario_, p_), scenario_.seed),
        carried_(scenario_.collective.dtype, 1), weights_(static_cast<size_t>(model_.parameters()), 0) {
    for (int s = 0; s < layout.servers; ++s) {
      std::vector<Range> held;
      size_t size = 0;
      for (const AsyncBucket& bucket : layout.buckets) {
        const auto [first, end] = bucket.carried(s);
        const size_t clipped = std::min(end, weights_.size());
        held.push_back({first, std::max(first, clipped), size});
        size += held.back().end - first;
      }
      ranges_.push_back(std::move(held));
      history_.push_back({std::vector<long double>(size, 0)});
    }
  }

  // Applies the next push in the servers' order: w_s -= rate / p x g_s on its bucket's shard.
  void apply(const ServerUpdate& u) {
    const std::vector<long double>& push = push_of(u.worker, u.round);
    const Range& range = ranges_[static_cast<size_t>(u.server)][static_cast<size_t>(std::max(u.bucket, 0))];
    std::vector<long double> next = history_[static_cast<size_t>(u.server)].back();
    const long double rate = static_cast<long double>(scenario_.training.learning_rate) / p_;
    for (size_t i = range.first; i < range.end; ++i) next[range.at + i - range.first] -= rate * push[i];
    history_[static_cast<size_t>(u.server)].push_back(std::move(next));
  }

  // Each rank's last model must be what its last pulls read, within (k+1) epsilon max|w|.
  void check_ranks(const SimResult& result, Verification& v) const {
    const int last = scenario_.training.rounds - 1;
    const long double eps = epsilon_of(scenario_.collective.dtype);
    for (int w = 0; w < p_; ++w)
      for (int s = 0; s < layout_.servers; ++s)
        for (size_t b = 0; b < layout_.buckets.size(); ++b) {
          const int version = index_.read(s, b, layout_.pusher_of(w), last);
          const auto& want = history_[static_cast<size_t>(s)][static_cast<size_t>(version)];
          long double largest = 0;
          for (long double x : want) largest = std::max(largest, std::fabs(x));
          const Range& range = ranges_[static_cast<size_t>(s)][b];
          for (size_t i = range.first; i < range.end; ++i)
            check(v, result.results[static_cast<size_t>(w)].get(i), want[range.at + i - range.first],
                  (version + 1) * eps * largest,
                  fmt::format("rank {} weight {} (server {}, after {} pushes)", w, i, s, version));
        }
  }

private:
  struct Range {
    size_t first = 0, end = 0;  // the weights [first, end) of one bucket's shard
    size_t at = 0;              // where they lie in the server's replayed weights
  };

  // What `pusher` pushed in `round` (each bucket's part): its node's gradients, each computed
  // on the model the pusher had pulled after the round before and rounded to the dtype as the
  // messages carry it, added up in rank order in the dtype as the node's first rank adds them.
  const std::vector<long double>& push_of(int pusher, int round) {
    auto [slot, fresh] = pushes_.try_emplace({pusher, round});
    if (!fresh) return slot->second;
    for (int s = 0; s < layout_.servers; ++s)
      for (size_t b = 0; b < layout_.buckets.size(); ++b) {
        const auto& held = history_[static_cast<size_t>(s)][static_cast<size_t>(index_.read(s, b, pusher, round - 1))];
        const Range& range = ranges_[static_cast<size_t>(s)][b];
        for (size_t i = range.first; i < range.end; ++i) weights_[i] = rounded(held[range.at + i - range.first]);
      }
    std::vector<long double>& push = slot->second;
    push.assign(weights_.size(), 0);
    bool first = true;
    for (int member : layout_.nodes[static_cast<size_t>(layout_.node_of[static_cast<size_t>(pusher)])]) {
      model_.gradient(weights_, model_.partition(member, p_), gradient_);
      for (size_t i = 0; i < push.size(); ++i)
        push[i] = rounded(first ? rounded(gradient_[i]) : push[i] + rounded(gradient_[i]));
      first = false;
    }
    return push;
  }

  long double rounded(long double x) {
    carried_.set(0, x);
    return carried_.get(0);
  }

  const Scenario& scenario_;
  const AsyncLayout& layout_;
  const UpdateIndex& index_;
  int p_;
  const LinearRegression model_;
  Buffer carried_;  // one element of the dtype, to round through
  std::vector<double> weights_, gradient_;
  std::vector<std::vector<Range>> ranges_;                        // [server][bucket]
  std::vector<std::vector<std::vector<long double>>> history_;    // [server][version]: its weights
  std::map<std::pair<int, int>, std::vector<long double>> pushes_;  // (pusher, round) -> its push
};

}  // namespace

Verification verify_async(const SimResult& result) {
  Verification v;
  v.checked_ranks = static_cast<int>(result.results.size());
  v.bitwise_identical = false;
  const AsyncLayout layout = async_layout(*result.plan);
  const UpdateIndex index(result.updates);
  if (!result.plan->scenario.training.has_model()) {
    verify_sums(result, layout, index, v);
    return v;
  }
  ModelReplay replay(result, layout, index);
  for (const ServerUpdate& u : result.updates) replay.apply(u);
  replay.check_ranks(result, v);
  v.tolerance = "the servers' sequence of pushes replayed, (k+1) epsilon max|w| after k pushes";
  return v;
}

}  // namespace collsim
