// Parameter-server allreduce (Li et al. 2014; the pattern allreduce replaced in data-parallel
// training): S servers, co-located on ranks 0 .. S-1 (each also a worker), each own one of
// S shards of the vector. Push: every rank sends shard s to server s, all at once, and
// server s reduces the p contributions; pull: server s sends the reduced shard to every
// rank. On a star the p-1 flows into (then out of) a server share its link:
// 2 (alpha + (p-1) n/(S B)). S = 1 is the naive allreduce; S = p a direct reduce-scatter
// and allgather, bandwidth-optimal.

#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

// parameter-server-begin
void allreduce_parameter_server(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int r = comm.rank();
  const int servers = servers_in_group(args.servers, p);
  const auto shards = split_evenly(buf.size(), servers);  // shard s lives on server s
  auto shard = [&](int s) { return buf.view(shards[s].offset, shards[s].count); };
  const bool server = r < servers;

  // 1. push: send shard s to server s; as a server, receive every other rank's copy of mine
  comm.label("push", 0);
  std::vector<Buffer> pushed(static_cast<size_t>(p));
  std::vector<Request> transfers;
  if (server)
    for (int q = 0; q < p; ++q)
      if (q != r) {
        pushed[q] = buf.scratch(shards[r].count);
        transfers.push_back(comm.irecv(q, pushed[q].holding(shard(r))));
      }
  for (int s = 0; s < servers; ++s)
    if (s != r) transfers.push_back(comm.isend(s, shard(s)));
  comm.wait_all(transfers);

  // the server reduces in rank order, x0 op x1 op ... op x(p-1), so every rank gets the same bits
  if (server) {
    pushed[r] = buf.scratch(shards[r].count);
    auto copy_of = [&](int q) { return pushed[static_cast<size_t>(q)].holding(shard(r)); };
    copy_elements(copy_of(r), shard(r));
    for (int q = 1; q < p; ++q) args.op->combine(copy_of(0), copy_of(q));
    copy_elements(shard(r), copy_of(0));
  }

  // 2. pull: as a server, send my reduced shard to every rank; receive every other shard
  comm.label("pull", 0);
  transfers.clear();
  if (server)
    for (int q = 0; q < p; ++q)
      if (q != r) transfers.push_back(comm.isend(q, shard(r)));
  for (int s = 0; s < servers; ++s)
    if (s != r) transfers.push_back(comm.irecv(s, shard(s)));
  comm.wait_all(transfers);
}
// parameter-server-end

// Push: every rank sends shard s to server s (s = 0, 1, ...); pull: each server sends its
// shard to every rank.
Schedule schedule_allreduce_parameter_server(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  const int servers = servers_in_group(in.servers, in.p);
  const auto shards = split_evenly(in.elems, servers);
  Step& push = schedule.step();
  push.reduced = true;
  for (int r = 0; r < in.p; ++r)
    for (int s = 0; s < servers; ++s)
      if (s != r) push.send(r, s, in.bytes(shards[static_cast<size_t>(s)].count));
  Step& pull = schedule.step();
  for (int s = 0; s < servers; ++s)
    for (int q = 0; q < in.p; ++q)
      if (q != s) pull.send(s, q, in.bytes(shards[static_cast<size_t>(s)].count));
  return schedule;
}

}  // namespace collsim
