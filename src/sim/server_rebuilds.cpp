#include "sim/server_rebuilds.hpp"

#include <simgrid/Exception.hpp>

#include "algorithms/algorithms.hpp"
#include "comm/comm.hpp"
#include "comm/comm_group.hpp"
#include "sim/recovery_adapter.hpp"
#include "sim/server_shares.hpp"

namespace collsim {
namespace {

// One round's collective as server `server` of `group`: the whole vector, or each bucket in
// turn (training.streams 1: recovery with servers runs one stream).
// After a server was lost the group's server peers are those left: this one's peer is its
// place among them, and the vector is shared over them (sim/server_shares.hpp).
void serve_round(RunState& state, CommGroup& group, int server, int round) {
  const RunPlan& plan = *state.setup.plan;
  Comm comm(group, group.size() + server_peer(group, plan.workers + server));
  comm.set_round(round);
  // shaped as the ranks' vectors (carried and logical elements), so that their views match
  Buffer data(state.setup.scenario->collective.dtype, plan.payload.carried_elems, plan.payload.logical_elems);
  const AlgorithmFn serve = state.setup.algorithm->switch_run;
  CollectiveArgs args = state.setup.args;
  args.servers = servers_serving(args, group);
  if (plan.training.buckets.empty()) {
    serve(comm, data, args);
    return;
  }
  for (size_t b = 0; b < plan.training.buckets.size(); ++b) {
    Buffer bucket = data.slice(plan.training.buckets[b].offset, plan.training.buckets[b].map);
    comm.set_bucket(static_cast<int>(b));
    CollectiveArgs on_bucket = args;
    on_bucket.deployment = bucket_deployment(state.setup, args, b);
    serve(comm, bucket, on_bucket);
  }
}

}  // namespace

void serve_through_rebuilds(RunState& state, int server) {
  const int rounds = state.setup.scenario->training.rounds;
  const int endpoint = state.setup.plan->workers + server;
  std::shared_ptr<CommGroup> group = state.membership.current_shared();
  int round = 0;
  for (;;) {
    try {
      for (; round < rounds; ++round) {
        // A returning worker joins at the start of a round nobody has started (the
        // coordinator's admission): from that round on the server serves its group too.
        const Membership::Switch* joining = state.membership.switch_at(round);
        if (joining != nullptr && joining->group->epoch() > group->epoch()) group = joining->group;
        serve_round(state, *group, server, round);
      }
    } catch (const VerdictPending&) {  // the news of a new group came first
    } catch (const simgrid::Exception&) {
      // A transfer broke: its worker was lost, or a survivor left it for the new group (its
      // pending transfers cancelled). The news of that group follows.
    }
    const Verdict news = state.recovery->take_news(endpoint);
    group = news.group;
    round = news.resume_round;
  }
}

}  // namespace collsim
