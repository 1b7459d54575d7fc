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

// What a pusher and a server exchange is the server's spans of the vector as one message:
// its even shard, sent from the vector itself, or its whole variables packed one after the
// other (TensorFlow sends a worker's tensors for one server over one gRPC connection, so
// the network shares its links per worker and server, not per tensor).
Buffer parcel_room(const Buffer& buf, const std::vector<Chunk>& spans) {
  if (spans.size() == 1) return buf.scratch(spans[0].count);
  size_t carried = 0, logical = 0;
  for (const Chunk& span : spans) {
    carried += buf.map().at(span.offset + span.count) - buf.map().at(span.offset);
    logical += span.count;
  }
  return Buffer(buf.dtype(), carried, logical);
}

View parcel(Buffer& room, Buffer& buf, const std::vector<Chunk>& spans) {
  return spans.size() == 1 ? room.holding(buf.view(spans[0].offset, spans[0].count)) : room.all();
}

// Copies the spans of `buf` into `room` one after the other (to_vector: back).
void pack(Buffer& buf, const std::vector<Chunk>& spans, Buffer& room, bool to_vector = false) {
  size_t at = 0;
  for (const Chunk& span : spans) {
    const View part = buf.view(span.offset, span.count);
    const View packed{room.data() + at * room.elem_bytes(), part.count, part.elem_bytes, part.logical};
    to_vector ? copy_elements(part, packed) : copy_elements(packed, part);
    at += part.count;
  }
}

// As a server holding `spans` of the vector (an even shard, or whole variables): receive
// every other pusher's parcel, handle it (its CPU pays each tensor), and reduce them in
// pusher order (x0 op x1 op ...), so that every rank gets the same bits. Returns the sum.
Buffer serve_push(Comm& comm, Buffer& buf, const std::vector<Chunk>& spans, const std::vector<int>& pushers,
                  const CollectiveArgs& args) {
  if (spans.empty()) return {};
  std::vector<Buffer> pushed(pushers.size());
  std::vector<Request> receives;
  for (size_t i = 0; i < pushers.size(); ++i) {
    pushed[i] = parcel_room(buf, spans);
    const View into = parcel(pushed[i], buf, spans);
    if (pushers[i] != comm.rank()) receives.push_back(comm.irecv(pushers[i], into));
    else if (spans.size() == 1) copy_elements(into, buf.view(spans[0].offset, spans[0].count));
    else pack(buf, spans, pushed[i]);
  }
  comm.wait_all(receives);
  double cpu = 0;
  for (const Chunk& span : spans) cpu += server_cpu(args.deployment, receives.size(), buf.view(span.offset, span.count).logical_bytes());
  comm.compute(cpu);
  for (size_t i = 1; i < pushers.size(); ++i) args.op->combine(parcel(pushed[0], buf, spans), parcel(pushed[i], buf, spans));
  return std::move(pushed[0]);
}

// As a server, the pull: the sum into the rank's own vector (so that the trace says which
// elements a reply of one span carries), then sent to every pusher but this rank.
void serve_pull(Comm& comm, Buffer& buf, const std::vector<Chunk>& spans, Buffer& sum, const std::vector<int>& pushers,
                std::vector<Request>& sends) {
  if (spans.empty()) return;
  View reply = sum.all();
  if (spans.size() == 1) {
    reply = buf.view(spans[0].offset, spans[0].count);
    copy_elements(reply, sum.holding(reply));
  } else {
    pack(buf, spans, sum, true);
  }
  for (int q : pushers)
    if (q != comm.rank()) sends.push_back(comm.isend(q, reply));
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

  // 1. push: send server s its parcel; as a server, receive the pushers' parcels and reduce them
  comm.label("push", 0);
  std::vector<Request> transfers;
  std::vector<Buffer> parcels(roles.servers.size());  // whole variables: packed, to and from each server
  if (pushes)
    for (size_t s = 0; s < roles.servers.size(); ++s) {
      if (roles.servers[s] == r || spans[s].empty()) continue;
      if (spans[s].size() > 1) {
        parcels[s] = parcel_room(buf, spans[s]);
        pack(buf, spans[s], parcels[s]);
      }
      const View out = spans[s].size() > 1 ? parcels[s].all() : buf.view(spans[s][0].offset, spans[s][0].count);
      transfers.push_back(comm.isend(roles.servers[s], out));
    }
  Buffer sum;
  if (server) sum = serve_push(comm, buf, spans[served], roles.pushers, args);
  comm.wait_all(transfers);

  // 2. pull: as a server, send the sum to every pusher; as a pusher, receive every other server's parcel
  comm.label("pull", 0);
  transfers.clear();
  if (server) {
    const size_t replies = (roles.pushers.size() - (pushes ? 1 : 0)) * spans[served].size();
    comm.compute(server_cpu(args.deployment, replies, 0));
    serve_pull(comm, buf, spans[served], sum, roles.pushers, transfers);
  }
  if (pushes)
    for (size_t s = 0; s < roles.servers.size(); ++s)
      if (roles.servers[s] != r && !spans[s].empty())
        transfers.push_back(comm.irecv(roles.servers[s], spans[s].size() > 1 ? parcels[s].all()
                                                                           : buf.view(spans[s][0].offset, spans[s][0].count)));
  comm.wait_all(transfers);
  for (size_t s = 0; s < roles.servers.size(); ++s)
    if (pushes && roles.servers[s] != r && spans[s].size() > 1) pack(buf, spans[s], parcels[s], true);
  if (node != nullptr) scatter_node(comm, buf, *node);
}
// parameter-server-end

// A server process (peer comm.size() + s): its side of the push and the pull.
void parameter_server_process(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const ServerRoles roles = server_roles(comm, args);
  const auto s = static_cast<size_t>(comm.rank() - comm.size());
  const std::vector<Chunk> spans = server_spans(args.deployment, buf.size(), static_cast<int>(roles.servers.size()))[s];
  comm.label("push", 0);
  Buffer sum = serve_push(comm, buf, spans, roles.pushers, args);
  comm.label("pull", 0);
  comm.compute(server_cpu(args.deployment, roles.pushers.size() * spans.size(), 0));
  std::vector<Request> sends;
  serve_pull(comm, buf, spans, sum, roles.pushers, sends);
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
      // one parcel each way per pusher; the server's CPU pays each tensor of it
      double busy = 0, parcel = 0;
      for (const Chunk& span : spans[s]) {
        const double bytes = in.bytes(span.count);
        parcel += bytes;
        // the server handles the messages once they have arrived, then reduces them (one
        // reduction fewer than contributions: the first is where the others are added up)
        const double reduce = std::isfinite(in.reduce_bandwidth)
                                  ? static_cast<double>(roles.pushers.size() - 1) * bytes / in.reduce_bandwidth
                                  : 0;
        busy += pushing ? server_cpu(in.deployment, messages, bytes) + reduce : server_cpu(in.deployment, messages, 0);
      }
      if (!spans[s].empty())
        for (int q : roles.pushers)
          if (q != server) pushing ? step.send(q, server, parcel) : step.send(server, q, parcel);
      step.busy = std::max(step.busy, busy);
    }
  }
  if (!roles.nodes.empty()) node_step(false);
  return schedule;
}

}  // namespace collsim
