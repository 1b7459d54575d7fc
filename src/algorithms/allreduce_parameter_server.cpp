// Parameter-server allreduce (Li et al. 2014; the pattern allreduce replaced in data-parallel
// training): S servers each own one of S shards of the vector. Push: every rank sends shard s
// to server s, all at once, and server s reduces the contributions; pull: server s sends the
// reduced shard back to every rank. The servers are ranks 0 .. S-1 (each also a worker), or
// processes of their own (collective.parameter_server.placement "shared" or "dedicated":
// peers comm.size() + s). With local aggregation (TensorFlow's distributed_replicated) each
// node's ranks first reduce into the node's first rank, which alone pushes and pulls, then
// hands the result back to its node. On a star, with the ranks serving, the p-1 flows into
// (then out of) a server share its link: 2 (alpha + (p-1) n/(S B)). S = 1 is the naive
// allreduce; S = p a direct reduce-scatter and allgather, bandwidth-optimal.

#include <algorithm>
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {
namespace {

// Who does what in one parameter-server allreduce.
struct ServerRoles {
  std::vector<int> servers;             // server s's peer: rank s, or comm.size() + s
  std::vector<int> pushers;             // the ranks that push and pull, in rank order
  std::vector<std::vector<int>> nodes;  // local aggregation: each node's ranks, its first pushes
};

bool among(const std::vector<int>& ranks, int rank) { return std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); }

ServerRoles server_roles(int p, const std::vector<int>& locality, int servers, const ServerDeployment& deployment) {
  ServerRoles roles;
  const int count = deployment.processes ? std::max(servers, 1) : servers_in_group(servers, p);
  for (int s = 0; s < count; ++s) roles.servers.push_back(deployment.processes ? p + s : s);
  if (deployment.local_aggregation) {
    roles.nodes = locality_groups(locality);
    for (const auto& node : roles.nodes) roles.pushers.push_back(node.front());
  } else {
    for (int r = 0; r < p; ++r) roles.pushers.push_back(r);
  }
  return roles;
}

ServerRoles server_roles(const Comm& comm, const CollectiveArgs& args) {
  const int p = comm.size();
  std::vector<int> locality(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) locality[static_cast<size_t>(r)] = comm.locality(r);
  return server_roles(p, locality, args.servers, args.deployment);
}

// As a server holding `spans` of the vector (an even shard, or whole variables): receive
// every other pusher's copy of each span, handle them, and reduce each in pusher order
// (x0 op x1 op ...), so that every rank gets the same bits. Returns the sums, span by span.
std::vector<Buffer> serve_push(Comm& comm, Buffer& buf, const std::vector<Chunk>& spans, const std::vector<int>& pushers,
                               const CollectiveArgs& args) {
  std::vector<std::vector<Buffer>> pushed(spans.size(), std::vector<Buffer>(pushers.size()));
  std::vector<Request> receives;
  double cpu = 0;
  for (size_t k = 0; k < spans.size(); ++k) {
    const View mine = buf.view(spans[k].offset, spans[k].count);
    size_t messages = 0;
    for (size_t i = 0; i < pushers.size(); ++i) {
      pushed[k][i] = buf.scratch(spans[k].count);
      if (pushers[i] == comm.rank()) {
        copy_elements(pushed[k][i].holding(mine), mine);
      } else {
        receives.push_back(comm.irecv(pushers[i], pushed[k][i].holding(mine)));
        ++messages;
      }
    }
    cpu += server_cpu(args.deployment, messages, mine.logical_bytes());
  }
  comm.wait_all(receives);
  comm.compute(cpu);
  std::vector<Buffer> sums;
  for (size_t k = 0; k < spans.size(); ++k) {
    const View mine = buf.view(spans[k].offset, spans[k].count);
    for (size_t i = 1; i < pushers.size(); ++i) args.op->combine(pushed[k][0].holding(mine), pushed[k][i].holding(mine));
    sums.push_back(std::move(pushed[k][0]));
  }
  return sums;
}

// As a server, the pull: each span's sum into the rank's own vector (so that the trace says
// which elements each reply carries), then sent to every pusher but this rank, span by span.
void serve_pull(Comm& comm, Buffer& buf, const std::vector<Chunk>& spans, std::vector<Buffer>& sums,
                const std::vector<int>& pushers, std::vector<Request>& sends) {
  for (size_t k = 0; k < spans.size(); ++k) {
    const View own = buf.view(spans[k].offset, spans[k].count);
    copy_elements(own, sums[k].holding(own));
    for (int q : pushers)
      if (q != comm.rank()) sends.push_back(comm.isend(q, own));
  }
}

// Local aggregation, before the push: a node's ranks send their vectors to its first rank,
// which reduces them in rank order.
void gather_node(Comm& comm, Buffer& buf, const std::vector<int>& node, const CollectiveArgs& args) {
  comm.label("node-reduce", 0);
  if (comm.rank() != node.front()) {
    comm.send(node.front(), buf.all());
    return;
  }
  std::vector<Buffer> received(node.size());
  std::vector<Request> receives;
  for (size_t i = 1; i < node.size(); ++i) {
    received[i] = buf.scratch(buf.size());
    receives.push_back(comm.irecv(node[i], received[i].holding(buf.all())));
  }
  comm.wait_all(receives);
  for (size_t i = 1; i < node.size(); ++i) args.op->combine(buf.all(), received[i].holding(buf.all()));
}

// Local aggregation, after the pull: the node's first rank hands the result to the others.
void scatter_node(Comm& comm, Buffer& buf, const std::vector<int>& node) {
  comm.label("node-broadcast", 0);
  if (comm.rank() != node.front()) {
    comm.recv(node.front(), buf.all());
    return;
  }
  std::vector<Request> sends;
  for (size_t i = 1; i < node.size(); ++i) sends.push_back(comm.isend(node[i], buf.all()));
  comm.wait_all(sends);
}

const std::vector<int>* node_of(const ServerRoles& roles, int rank) {
  for (const auto& node : roles.nodes)
    if (among(node, rank)) return &node;
  return nullptr;
}

}  // namespace

// parameter-server-begin
void allreduce_parameter_server(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const ServerRoles roles = server_roles(comm, args);
  const int r = comm.rank();
  // what server s holds: shard s of an even split, or the variables placed on it
  const auto spans = server_spans(args.deployment, buf.size(), static_cast<int>(roles.servers.size()));
  const auto served = static_cast<size_t>(std::find(roles.servers.begin(), roles.servers.end(), r) - roles.servers.begin());
  const bool server = served < roles.servers.size(), pushes = among(roles.pushers, r);
  const std::vector<int>* node = node_of(roles, r);
  if (node != nullptr) gather_node(comm, buf, *node, args);

  // 1. push: send server s its spans; as a server, receive the pushers' copies of mine and reduce them
  comm.label("push", 0);
  std::vector<Request> transfers;
  if (pushes)
    for (size_t s = 0; s < roles.servers.size(); ++s)
      if (roles.servers[s] != r)
        for (const Chunk& span : spans[s]) transfers.push_back(comm.isend(roles.servers[s], buf.view(span.offset, span.count)));
  std::vector<Buffer> sums;
  if (server) sums = serve_push(comm, buf, spans[served], roles.pushers, args);
  comm.wait_all(transfers);

  // 2. pull: as a server, send the sums to every pusher; as a pusher, receive every other server's spans
  comm.label("pull", 0);
  transfers.clear();
  if (server) {
    const size_t replies = (roles.pushers.size() - (pushes ? 1 : 0)) * spans[served].size();
    comm.compute(server_cpu(args.deployment, replies, 0));
    serve_pull(comm, buf, spans[served], sums, roles.pushers, transfers);
  }
  if (pushes)
    for (size_t s = 0; s < roles.servers.size(); ++s)
      if (roles.servers[s] != r)
        for (const Chunk& span : spans[s]) transfers.push_back(comm.irecv(roles.servers[s], buf.view(span.offset, span.count)));
  comm.wait_all(transfers);
  if (node != nullptr) scatter_node(comm, buf, *node);
}
// parameter-server-end

// A server process (peer comm.size() + s): its side of the push and the pull.
void parameter_server_process(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const ServerRoles roles = server_roles(comm, args);
  const auto s = static_cast<size_t>(comm.rank() - comm.size());
  const std::vector<Chunk> spans = server_spans(args.deployment, buf.size(), static_cast<int>(roles.servers.size()))[s];
  comm.label("push", 0);
  std::vector<Buffer> sums = serve_push(comm, buf, spans, roles.pushers, args);
  comm.label("pull", 0);
  comm.compute(server_cpu(args.deployment, roles.pushers.size() * spans.size(), 0));
  std::vector<Request> sends;
  serve_pull(comm, buf, spans, sums, roles.pushers, sends);
  comm.wait_all(sends);
}

// Local aggregation: each node's ranks send their vectors to its first rank (reduced there);
// push: every pusher sends shard s to server s (s = 0, 1, ...), which handles and reduces them;
// pull: each server handles its replies and sends its shard to every pusher; then each node's
// first rank sends the result to the others.
Schedule schedule_allreduce_parameter_server(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2 && !in.deployment.processes) return schedule;
  std::vector<int> locality = in.locality;
  if (locality.empty()) locality.assign(static_cast<size_t>(in.p), 0);
  const ServerRoles roles = server_roles(in.p, locality, in.servers, in.deployment);
  const auto spans = server_spans(in.deployment, in.elems, static_cast<int>(roles.servers.size()));
  auto node_step = [&](bool gather) {
    Step& step = schedule.step();
    step.reduced = gather;
    for (const auto& node : roles.nodes)
      for (size_t i = 1; i < node.size(); ++i)
        gather ? step.send(node[i], node.front(), in.bytes(in.elems)) : step.send(node.front(), node[i], in.bytes(in.elems));
  };
  if (!roles.nodes.empty()) node_step(true);
  for (const bool pushing : {true, false}) {
    Step& step = schedule.step();
    for (size_t s = 0; s < roles.servers.size(); ++s) {
      const int server = roles.servers[s];
      const size_t messages = roles.pushers.size() - (among(roles.pushers, server) ? 1 : 0);
      double busy = 0;
      for (const Chunk& span : spans[s]) {
        const double bytes = in.bytes(span.count);
        for (int q : roles.pushers)
          if (q != server) pushing ? step.send(q, server, bytes) : step.send(server, q, bytes);
        // the server handles the messages once they have arrived, then reduces them (one
        // reduction fewer than contributions: the first is where the others are added up)
        const double reduce = std::isfinite(in.reduce_bandwidth)
                                  ? static_cast<double>(roles.pushers.size() - 1) * bytes / in.reduce_bandwidth
                                  : 0;
        busy += pushing ? server_cpu(in.deployment, messages, bytes) + reduce : server_cpu(in.deployment, messages, 0);
      }
      step.busy = std::max(step.busy, busy);
    }
  }
  if (!roles.nodes.empty()) node_step(false);
  return schedule;
}

}  // namespace collsim
