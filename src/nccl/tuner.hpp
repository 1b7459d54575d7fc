#pragma once
// NCCL's tuner for an allreduce: the channels and per-channel bandwidths its topology search
// finds (ncclTopoCompute, approximated: search.cc's speed arrays and link budgets), the
// latency and bandwidth of every (algorithm, protocol) (ncclTopoTuneModel), the predicted
// time of each (ncclTopoGetAlgoTime: latency + bytes / bandwidth) and the fastest enabled
// one, with its channel count (getAlgoInfo). docs/nccl.md writes the formulas out.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nccl/constants.hpp"
#include "nccl/system.hpp"

namespace collsim::nccl {

// One graph of NCCL's search: its channels and each channel's bandwidth inside a node and
// across nodes, GB/s.
struct Graph {
  int channels = 1;
  double bw_intra = 0, bw_inter = 0;
};

struct Graphs {
  Graph ring, tree, nvls, collnet;
  const Graph& of(Algo algo) const;
};

// The graphs NCCL's search would find on this system (docs/nccl.md, the channel search).
Graphs search_graphs(const GpuSystem& system);

// One (algorithm, protocol) as NCCL's model prices it for a size.
struct Candidate {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  std::string disabled;        // why NCCL would not run it here (empty: enabled)
  double latency_us = 0;       // ncclTopoTuneModel's latency (with the ring's plateau)
  double bandwidth_gbs = 0;    // its algorithm bandwidth (with the tree correction)
  double time_us = 0;          // latency + bytes / bandwidth
};

// What the user forces (nccl.algo, nccl.proto, nccl.channels: NCCL_ALGO, NCCL_PROTO,
// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS).
struct Forced {
  std::optional<Algo> algo;
  std::optional<Proto> proto;
  std::optional<int> channels;
  std::vector<Algo> runnable;  // the algorithms the caller can run (empty: all)
  // Algorithms collsim runs but leaves out of the tuner's choice, and why.
  std::vector<std::pair<Algo, std::string>> set_aside;
};

// Every (algorithm, protocol) for an allreduce of `bytes` per rank, in NCCL's order.
std::vector<Candidate> price_allreduce(const GpuSystem& system, double bytes, const Forced& forced);

struct Choice {
  Candidate chosen;
  int channels = 1;        // channels NCCL runs (getAlgoInfo's count, or the forced one)
  Graph graph;             // the chosen algorithm's graph
  std::string why;         // in NCCL's names: what won, by how much, what was off
};

// The fastest enabled candidate, as NCCL's tuner picks it. Throws InputError naming
// `field` when what is forced cannot run here.
Choice choose_allreduce(const GpuSystem& system, double bytes, const Forced& forced, const std::string& field);

}  // namespace collsim::nccl
