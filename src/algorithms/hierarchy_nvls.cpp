// hierarchical's NVLS level (collective.intra = nvls): inside each node its NVSwitch reduces
// (NVLink SHARP, as NCCL's NVLS uses it: nvls_plan.hpp), the groups being the nodes.
// - reduce-scatter: every GPU sends its vector to its node's switch, which reduces the node's
//   contributions in member order and sends member i chunk i of the group's cut (the chunk the
//   ring's reduce-scatter would leave it);
// - allgather: member i sends its chunk to the switch's multicast, which sends every member the
//   whole vector.
// Each GPU sends (1 + 1/g) and receives (1 + 1/g) times the vector through its NVLink port, as
// in NCCL's NVLS. With halving-doubling or a tree between the nodes (or nodes of different
// sizes) each phase moves the vector at once, as the other levels do; with the ring between
// nodes of equal size the level runs chunk by chunk through NCCL's FIFO, the node's reduction,
// the ring and the multicast of successive chunks overlapping (nvls_plan.hpp, NvlsAcross::ring).
// The switch's reduction costs no time (it is the switch's, not a GPU's).
// A node's switch runs two actors, its reductions and its multicasts (as nccl-nvls's do):
// switch actor k of 2G (G groups) is group k's reductions for k < G, group k - G's multicasts.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/algorithms.hpp"
#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/message_counts.hpp"
#include "algorithms/nvls_rounds.hpp"
#include "algorithms/pipelined_rounds.hpp"
#include "algorithms/schedule.hpp"
#include "util/errors.hpp"

namespace collsim {

bool nvls_ring_pipelined(const HierarchyPlan& plan, HierarchyLevel inter) {
  return inter == HierarchyLevel::ring && plan.even();
}

// A chunk's messages: each GPU's two to its switch and 2(G-1) of the ring, the switch's two to each GPU.
size_t nvls_ring_chunk(size_t count, size_t segment_elems, int p, int groups) {
  const double per_chunk = static_cast<double>(p) * (4.0 + 2.0 * (groups - 1));
  // (the model follows them rank by rank up to max_followed_messages: beyond, it would price lock steps)
  const double budget = std::min(max_pipelined_messages, static_cast<double>(max_followed_messages));
  const auto most = static_cast<size_t>(std::max(1.0, std::floor(budget / per_chunk)));
  return std::max({segment_elems, size_t{1}, (count + most - 1) / most});
}

void hierarchical_nvls_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args, int groups) {
  CollectiveArgs chunked = args;
  chunked.segment_elems = nvls_ring_chunk(buf.size(), args.segment_elems, comm.size(), groups);
  if (comm.rank() >= comm.size()) run_nvls_switch(comm, buf, chunked, NvlsAcross::ring);
  else run_nvls_rank(comm, buf, chunked, NvlsAcross::ring);
}

Schedule hierarchical_nvls_ring_schedule(const ModelInput& in, int groups) {
  ModelInput chunked = in;
  chunked.segment_elems = nvls_ring_chunk(in.elems, in.segment_elems, in.p, groups);
  return nvls_schedule(chunked, NvlsAcross::ring);
}

void hierarchical_nvls_inside(Comm& comm, Buffer& buf, const HierarchyPlan& plan, bool gather) {
  const auto [group, local] = plan.place(comm.rank());
  const Chunk mine = plan.group_chunks[static_cast<size_t>(group)][static_cast<size_t>(local)];
  const int reducer = comm.reducing_switch(SwitchKind::nvlink);
  if (reducer < 0) throw std::logic_error("hierarchical: collective.intra nvls without the nodes' NVSwitches");
  const int multicaster = reducer + static_cast<int>(plan.groups.size());
  // the switch answers only once every member's part is in: my send has left by then
  comm.label(gather ? "nvls-allgather" : "nvls-reduce-scatter", 0);
  Request up = gather ? comm.isend(multicaster, buf.view(mine.offset, mine.count)) : comm.isend(reducer, buf.all());
  if (gather) comm.recv(multicaster, buf.all());
  else comm.recv(reducer, buf.view(mine.offset, mine.count));
  comm.wait(up);
}

void hierarchical_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const auto groups = locality_groups(localities_of(comm));
  const HierarchyPlan plan = plan_hierarchy(turned_groups(groups, 0), buf.size());
  if (nvls_ring_pipelined(plan, args.inter)) return hierarchical_nvls_ring(comm, buf, args, static_cast<int>(groups.size()));
  const int actor = comm.rank() - comm.size(), group_count = static_cast<int>(plan.groups.size());
  const int group = actor % group_count;
  const std::vector<int>& members = plan.groups[static_cast<size_t>(group)];
  const std::vector<Chunk>& chunks = plan.group_chunks[static_cast<size_t>(group)];
  std::vector<Request> requests;
  if (actor >= group_count) {  // the multicast: every member's chunk in, the whole vector out
    Buffer whole(buf.dtype(), buf.map());  // carried as the GPUs' vectors, so that views match
    comm.label("nvls-allgather", 0);
    for (size_t i = 0; i < members.size(); ++i) requests.push_back(comm.irecv(members[i], whole.view(chunks[i].offset, chunks[i].count)));
    comm.wait_all(requests);
    requests.clear();
    for (int member : members) requests.push_back(comm.isend(member, whole.all()));
    comm.wait_all(requests);
    return;
  }
  // the reductions: every member's vector in, reduced in member order, chunk i to member i
  comm.label("nvls-reduce-scatter", 0);
  std::vector<Buffer> contributions;
  contributions.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    contributions.emplace_back(buf.dtype(), buf.map());
    requests.push_back(comm.irecv(members[i], contributions.back().all()));
  }
  comm.wait_all(requests);
  const ReduceOp in_switch(args.op->kind(), args.op->dtype());  // no cost set: the switch's reduction is free
  for (size_t i = 1; i < members.size(); ++i) in_switch.combine(contributions.front().all(), contributions[i].all());
  requests.clear();
  for (size_t i = 0; i < members.size(); ++i)
    requests.push_back(comm.isend(members[i], contributions.front().view(chunks[i].offset, chunks[i].count)));
  comm.wait_all(requests);
}

// Node k's switch is schedule rank p + k for its reductions, p + G + k for its multicasts.
void hierarchical_nvls_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, bool gather) {
  const int group_count = static_cast<int>(plan.groups.size());
  // the switches are set up for a run's collective (plan/model_plan.cpp), not for a group of a
  // parallel step or a formula
  if (in.switch_endpoints.size() != 2 * plan.groups.size())
    throw InputError("collective.intra: nvls runs in a collective or training run of its own (its NVSwitches are set "
                     "up there), not in a parallel step's groups");
  Step& to_switch = schedule.step();
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const int reducer = in.p + static_cast<int>(k), multicaster = reducer + group_count;
    const auto& members = plan.groups[k];
    for (size_t i = 0; i < members.size(); ++i)
      to_switch.send(members[i], gather ? multicaster : reducer,
                     in.bytes(gather ? plan.group_chunks[k][i].count : in.elems));
  }
  Step& from_switch = schedule.step();
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const int reducer = in.p + static_cast<int>(k), multicaster = reducer + group_count;
    const auto& members = plan.groups[k];
    for (size_t i = 0; i < members.size(); ++i)
      from_switch.send(gather ? multicaster : reducer, members[i],
                       in.bytes(gather ? in.elems : plan.group_chunks[k][i].count));
  }
}

}  // namespace collsim
