// The contention-aware model on hand-built networks, against times worked out by hand:
// max-min sharing, fatpipes, progressive filling, SimGrid's latency weights, overheads.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "algorithms/chunks.hpp"
#include "algorithms/registry.hpp"
#include "model/contention.hpp"
#include "model/network.hpp"

using namespace collsim;

namespace {

// Endpoints 0..n-1; every route given by hand.
class HandNetwork : public Network {
public:
  std::vector<NetworkLink> links;
  std::map<std::pair<int, int>, NetworkRoute> routes;
  const NetworkRoute& route(int from, int to) const override { return routes.at({from, to}); }
  const NetworkLink& link(int id) const override { return links[static_cast<size_t>(id)]; }
  size_t link_count() const override { return links.size(); }
};

ModelInput on(std::shared_ptr<HandNetwork> network, int p) {
  ModelInput in;
  in.p = p;
  in.network = std::move(network);
  return in;
}

}  // namespace

TEST_CASE("two messages on one link take twice as long; a fatpipe does not share") {
  for (bool shared : {true, false}) {
    CAPTURE(shared);
    auto net = std::make_shared<HandNetwork>();
    net->links = {{"backbone", 1e9, shared}};
    net->routes[{0, 2}] = {1e-6, {0}};
    net->routes[{1, 3}] = {1e-6, {0}};
    Schedule schedule;
    schedule.step().send(0, 2, 1e6).send(1, 3, 1e6);  // 1 MB each over 1 GB/s
    const ModelEstimate e = estimate_schedule(schedule, on(net, 4));
    // shared: 0.5 GB/s each, 2 ms; fatpipe: 1 GB/s each, 1 ms
    CHECK(e.time == doctest::Approx(1e-6 + (shared ? 2e-3 : 1e-3)).epsilon(1e-12).scale(0));
    CHECK(e.bottleneck == "backbone");
    CHECK(e.sharing == 2);
  }
}

TEST_CASE("max-min: a message held back elsewhere leaves the rest of a link to the others") {
  // a: 0->2 over L0 (1 GB/s) then L1 (0.25 GB/s); b: 1->3 over L0 only
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"L0", 1e9, true}, {"L1", 0.25e9, true}};
  net->routes[{0, 2}] = {1e-6, {0, 1}};
  net->routes[{1, 3}] = {1e-6, {0}};
  Schedule schedule;
  schedule.step().send(0, 2, 1e6).send(1, 3, 1e6);
  // a gets 0.25 GB/s (4 ms); b the remaining 0.75 GB/s: 1 MB in 1.333 ms
  const ModelEstimate e = estimate_schedule(schedule, on(net, 4));
  CHECK(e.time == doctest::Approx(1e-6 + 4e-3).epsilon(1e-12).scale(0));
  CHECK(e.bottleneck == "L1");
  CHECK(e.sharing == 1);
}

TEST_CASE("progressive filling: when a message ends, the others share its bandwidth") {
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"L", 1e9, true}};
  net->routes[{0, 1}] = {1e-6, {0}};
  net->routes[{2, 3}] = {1e-6, {0}};
  Schedule schedule;
  schedule.step().send(0, 1, 1e6).send(2, 3, 3e6);
  // both at 0.5 GB/s until the 1 MB one ends (2 ms); the other's last 2 MB alone: 2 ms more
  CHECK(estimate_schedule(schedule, on(net, 4)).time == doctest::Approx(1e-6 + 4e-3).epsilon(1e-12).scale(0));
}

TEST_CASE("SimGrid weighs each message by 1 / its route's latency") {
  // two messages on L, latencies 1 us and 3 us: rates 3:1 of 1 GB/s (CM02's sharing penalty)
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"L", 1e9, true}};
  net->routes[{0, 1}] = {1e-6, {0}};
  net->routes[{2, 3}] = {3e-6, {0}};
  Schedule schedule;
  schedule.step().send(0, 1, 3e6).send(2, 3, 3e6);
  // From 3 us (both started; the first alone at 1 GB/s for 2 us: 2 kB) the first runs at
  // 0.75 GB/s and ends at 3 us + (3e6 - 2e3) / 0.75e9; the second got 0.25 GB/s meanwhile,
  // then the whole link.
  const double first_end = 3e-6 + (3e6 - 2e3) / 0.75e9;
  const double second_left = 3e6 - 0.25e9 * (first_end - 3e-6);
  CHECK(estimate_schedule(schedule, on(net, 4)).time == doctest::Approx(first_end + second_left / 1e9).epsilon(1e-12).scale(0));
}

TEST_CASE("a sender's messages leave one overhead apart; steps add up along their dependencies") {
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"up0", 1e9, true}, {"d1", 1e9, true}, {"d2", 1e9, true}};
  net->routes[{0, 1}] = {1e-6, {0, 1}};
  net->routes[{0, 2}] = {1e-6, {0, 2}};
  ModelInput in = on(net, 3);
  in.overhead = 10e-3;  // far longer than a message: they never overlap
  Schedule schedule;
  schedule.step().send(0, 1, 1e6).send(0, 2, 1e6);
  // the second leaves at 2 o: 20 ms + 1 us + 1 ms
  CHECK(estimate_schedule(schedule, in).time == doctest::Approx(2 * 10e-3 + 1e-6 + 1e-3).epsilon(1e-12).scale(0));
  // two chains side by side (3 steps and 1 step), then one step after both
  Schedule dag;
  dag.step_after({}, 3).send(0, 1, 1e6);
  dag.step_after({}, 1).send(0, 2, 1e6);
  dag.step_after({0, 1}).send(0, 1, 1e6);
  in.overhead = 0;
  CHECK(estimate_schedule(dag, in).time == doctest::Approx(4 * (1e-6 + 1e-3)).epsilon(1e-12).scale(0));
}

TEST_CASE("rank by rank: a rank moves on when its own messages are done, a message moves when both ends posted it") {
  // 0->1 over a 0.5 GB/s link, 2->3 and 2->1 over 1 GB/s links of their own; 1 MB each, 1 us
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"slow", 0.5e9, true}, {"fast", 1e9, true}, {"side", 1e9, true}};
  net->routes[{0, 1}] = {1e-6, {0}};
  net->routes[{2, 3}] = {1e-6, {1}};
  net->routes[{2, 1}] = {1e-6, {2}};
  const ModelInput in = on(net, 4);
  const double slow = 1e-6 + 2e-3, fast = 1e-6 + 1e-3;
  // rank 2 sends to 3 three times while 0 sends to 1 once
  Schedule chain;
  chain.step().send(0, 1, 1e6).send(2, 3, 1e6);
  chain.step(2).send(2, 3, 1e6);
  CHECK(estimate_schedule(chain, in).time == doctest::Approx(slow + 2 * fast).epsilon(1e-12).scale(0));  // lock step
  chain.mark_rank_by_rank();
  const ModelEstimate followed = estimate_schedule(chain, in);
  CHECK(followed.rank_by_rank);
  CHECK(followed.time == doctest::Approx(3 * fast).epsilon(1e-12).scale(0));  // rank 2 never waits for 0 -> 1
  // rank 2 posts 2 -> 1 at once, but rank 1 takes it only once 0 -> 1 has arrived
  Schedule rendezvous;
  rendezvous.mark_rank_by_rank();
  rendezvous.step().send(0, 1, 1e6);
  rendezvous.step().send(2, 1, 1e6);
  CHECK(estimate_schedule(rendezvous, in).time == doctest::Approx(slow + fast).epsilon(1e-12).scale(0));
}

TEST_CASE("rank by rank with reduce_bandwidth: a rank reduces what it received before its next step, alone") {
  // chain A: 0 -> 1 -> 2, 1 MB each; chain B: 3 -> 4 (4 MB) then 4 -> 5 (1 kB); every
  // link its own, 1 GB/s, 1 us; both steps reduced at R = 1 GB/s
  auto net = std::make_shared<HandNetwork>();
  net->links = {{"a", 1e9, true}, {"b", 1e9, true}, {"c", 1e9, true}, {"d", 1e9, true}};
  net->routes[{0, 1}] = {1e-6, {0}};
  net->routes[{1, 2}] = {1e-6, {1}};
  net->routes[{3, 4}] = {1e-6, {2}};
  net->routes[{4, 5}] = {1e-6, {3}};
  ModelInput in = on(net, 6);
  in.reduce_bandwidth = 1e9;
  Schedule schedule;
  Step& first = schedule.step().send(0, 1, 1e6).send(3, 4, 4e6);
  first.reduced = true;
  Step& second = schedule.step().send(1, 2, 1e6).send(4, 5, 1e3);
  second.reduced = true;
  // in lock step each step lasts its slowest message plus the largest reduction
  const double lock_step = (1e-6 + 4e-3 + 4e-3) + (1e-6 + 1e-3 + 1e-3);
  CHECK(estimate_schedule(schedule, in).time == doctest::Approx(lock_step).epsilon(1e-12).scale(0));
  // rank by rank, rank 4 reduces its 4 MB (4 ms) before it sends the 1 kB on, which rank 5
  // then reduces (1 us): chain B ends last; chain A's reductions overlap it
  schedule.mark_rank_by_rank();
  const double chain_a = 2 * (1e-6 + 1e-3) + 2 * 1e-3;
  const double chain_b = (1e-6 + 4e-3) + 4e-3 + (1e-6 + 1e-6) + 1e-6;
  const ModelEstimate followed = estimate_schedule(schedule, in);
  CHECK(followed.rank_by_rank);
  CHECK(followed.estimate_note.empty());
  CHECK(followed.time == doctest::Approx(std::max(chain_a, chain_b)).epsilon(1e-12).scale(0));
  // without chain B the last reduction (rank 2's) still counts: A's own end
  Schedule only_a;
  only_a.mark_rank_by_rank();
  only_a.step().send(0, 1, 1e6).reduced = true;
  only_a.step().send(1, 2, 1e6).reduced = true;
  CHECK(estimate_schedule(only_a, in).time == doctest::Approx(chain_a).epsilon(1e-12).scale(0));
  // free reductions: the transfers only
  in.reduce_bandwidth = std::numeric_limits<double>::infinity();
  CHECK(estimate_schedule(only_a, in).time == doctest::Approx(2 * (1e-6 + 1e-3)).epsilon(1e-12).scale(0));
}

TEST_CASE("thousands of messages on one link: the link stays full, within 0.1% of the hand-worked time") {
  // n messages of different sizes (1..n MB) through one 1 GB/s link: the link is always
  // full, so the last one arrives after the sum of the bytes / 1 GB/s. Above 4096
  // messages in flight the fluid run takes ends within 0.1% together.
  for (int n : {100, 5000}) {
    CAPTURE(n);
    auto net = std::make_shared<HandNetwork>();
    net->links = {{"L", 1e9, true}};
    Schedule schedule;
    Step& step = schedule.step();
    double bytes = 0;
    for (int i = 0; i < n; ++i) {
      net->routes[{2 * i, 2 * i + 1}] = {1e-6, {0}};
      step.send(2 * i, 2 * i + 1, 1e6 * (i + 1));
      bytes += 1e6 * (i + 1);
    }
    const double time = estimate_schedule(schedule, on(net, 2 * n)).time;
    CHECK(time == doctest::Approx(1e-6 + bytes / 1e9).epsilon(n > 4096 ? 1e-3 : 1e-9).scale(0));
  }
}

TEST_CASE("impractical schedules are named, with the reason") {
  Schedule many;
  Step& step = many.step();
  for (int r = 0; r < 300; ++r)
    for (int q = 0; q < 300; ++q)
      if (q != r) step.send(r, q, 1);
  CHECK(impractical_reason(many).find("89700 messages at once") != std::string::npos);
  Schedule big;
  big.step().send(1, 0, 40.0 * (1ull << 30)).send(2, 0, 40.0 * (1ull << 30));
  CHECK(impractical_reason(big).find("rank 0 receives 80 GiB") != std::string::npos);
  Schedule fine;
  fine.step().send(0, 1, 1e9);
  CHECK(impractical_reason(fine).empty());
}

TEST_CASE("the model's own limits: a schedule beyond its budget is not built, a huge step not priced") {
  const AlgorithmInfo& direct = find_algorithm(Collective::allreduce, "direct", "--algorithm");
  ModelInput in;
  in.p = 64;
  in.elems = 64 * 64;
  in.alpha = 1e-6;
  in.bandwidth = 1e9;
  std::string why;
  {
    // direct sends p(p-1) = 4032 messages: a budget of 4000 stops it, 4032 does not
    const FlowBudget budget(4000);
    CHECK_THROWS_AS(direct.schedule(in), ScheduleTooLarge);
  }
  {
    const FlowBudget budget(4032);
    CHECK(direct.schedule(in).steps().front().flows.size() == 4032);
  }
  CHECK(schedule_within_model_limits(direct, in, why).has_value());
  CHECK(why.empty());
  Schedule wide;
  Step& step = wide.step();
  for (size_t m = 0; m <= max_model_step_messages; ++m) step.send(static_cast<int>(m % 1000), 1000, 1);
  CHECK(model_limit_reason(wide).find(std::to_string(max_model_step_messages + 1) + " messages at once") !=
        std::string::npos);
}

TEST_CASE("alternating steps of a lock-step schedule are stored once each and cost the same sum") {
  // A B A B A on the contention-free star: 3 A's of 1 MB and 2 B's of 2 MB, one message each
  Schedule schedule;
  for (int s = 0; s < 5; ++s) {
    schedule.step().send(0, 1, s % 2 == 0 ? 1e6 : 2e6);
    schedule.merge_last_if_repeated();
    schedule.merge_last_if_alternating();
  }
  REQUIRE(schedule.steps().size() == 2);
  CHECK(schedule.steps()[0].repeat == 3);
  CHECK(schedule.steps()[1].repeat == 2);
  ModelInput in;
  in.p = 2;
  in.alpha = 1e-6;
  in.bandwidth = 1e9;
  const double want = 3 * (1e-6 + 1e6 / 1e9) + 2 * (1e-6 + 2e6 / 1e9);
  CHECK(estimate_schedule(schedule, in).time == doctest::Approx(want).epsilon(1e-12).scale(0));
  CHECK(estimate_schedule(schedule, in).steps == 5);
}

TEST_CASE("chunk spans by prefix sums equal the chunks added up") {
  const std::vector<Chunk> chunks = split_evenly(1000, 37);
  const ChunkSpans spans(chunks);
  for (int first = 0; first < 37; ++first)
    for (int n = 0; first + n <= 37; ++n) {
      CAPTURE(first);
      CAPTURE(n);
      size_t sum = 0;
      for (int i = first; i < first + n; ++i) sum += chunks[static_cast<size_t>(i)].count;
      CHECK(spans.count(first, n) == sum);
    }
}

TEST_CASE("a pipelined tree priced in lock step carries every segment over every edge, up and down, once") {
  // p = 1000 with 200 segments per tree: beyond max_followed_messages, so its steps are
  // priced in lock step and most of them are counted as repeats of the step two before
  // (schedule_blocks.cpp): the edges' messages, counted from the trees themselves, must match.
  for (const std::string name : {"binary-tree", "double-binary-tree"}) {
    CAPTURE(name);
    ModelInput in;
    in.p = 1000;
    in.segment_elems = 64;
    const TreeSchedule trees = name == "binary-tree" ? schedule_binary_tree(in.p, 0) : schedule_double_binary_tree(in.p);
    in.elems = 200 * 64 * trees.trees.size();
    const Schedule schedule = find_algorithm(Collective::allreduce, name, "algorithm").schedule(in);
    std::map<std::tuple<int, int, bool>, int> carried;  // (from, to, reduced) -> segments
    size_t messages = 0;
    for (const Step& step : schedule.steps())
      for (const Flow& flow : step.flows) {
        carried[{flow.src, flow.dst, step.reduced}] += step.repeat;
        messages += static_cast<size_t>(step.repeat);
      }
    std::map<std::tuple<int, int, bool>, int> want;
    for (const Tree& tree : trees.trees)
      for (int v = 0; v < in.p; ++v) {
        const int parent = tree.parent[static_cast<size_t>(v)];
        if (parent < 0) continue;
        want[{v, parent, true}] += 200;
        want[{parent, v, false}] += 200;
      }
    CHECK(messages == 2 * 999 * 200 * trees.trees.size());
    CHECK(messages > max_followed_messages);
    CHECK(carried == want);
    CHECK(schedule.steps().size() < 200);  // stored as the alternating patterns, not thousands of steps
  }
}
