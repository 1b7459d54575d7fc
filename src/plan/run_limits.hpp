#pragma once
// The stated limits of a run (README "Limits"), checked before anything is built or
// simulated, so that an input beyond them is refused at once with what it would need
// instead of running for hours or running out of memory.
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "plan/payload.hpp"
#include "training/iteration.hpp"

namespace collsim {

constexpr int max_workers = 1'000'000;           // P, in scenarios and in `collsim model`
constexpr long long max_run_hosts = 65'536;      // hosts of a platform a run builds
constexpr long long max_model_hosts = 1'000'000; // hosts of a platform `collsim model` builds (as generators allow)
constexpr double max_run_messages = 3e8;         // messages a run may simulate (counted per algorithm)
constexpr double max_carried_bytes = 8.0 * (1 << 30);  // buffers held in memory, all ranks (estimated)
// Transfers in flight at once (collective_messages_at_once): SimGrid keeps each one's state
// (about 2.8 KB: alltoall direct at p = 1024, 1,047,552 at once, peaked at 2.89 GB) until it
// ends; 4 million is about 11 GB. Without it, alltoall direct on 16,384 ranks (268 million at
// once, about 750 GB) ran out of memory instead of being refused.
constexpr double max_run_messages_at_once = 4e6;
constexpr double bytes_per_transfer_in_flight = 2.8e3;  // measured as above

// The hosts of a generator string, or of a platform file by a scan of its XML (hosts,
// and the radicals of clusters), without building it. Throws InputError beyond
// `most` (max_run_hosts for a run, max_model_hosts for `collsim model`).
// Returns the number of hosts.
long long check_platform_size(const std::string& topology, const std::string& scenario_dir,
                              long long most = max_run_hosts);

// The messages and buffers of the run of `scenario` with p ranks, fault-free: each
// collective's messages as its algorithm sends them (algorithms/message_counts.hpp; auto:
// the most of the algorithms it may choose), per bucket of layered training (the
// reduce-scatter and the allgather of each with zero2), times the rounds; buffers: each
// rank's vector and the input kept for verification (and the previous round's with
// recovery.policy rebuild, or a model) plus the algorithm's scratch. The messages follow
// the logical elements of each part of the payload (a bucket each, or the whole vector),
// `segment_elems` logical elements per segment; the buffers its carried elements.
// Throws InputError beyond max_run_messages, max_run_messages_at_once or max_carried_bytes;
// returns the figures.
struct RunSize {
  long long hosts = 0;      // of the platform (check_platform_size)
  double messages = 0;      // the run's messages, at most (auto: the most of its candidates)
  double buffer_bytes = 0;  // every rank's buffers together
};
// `buckets`: layered training's gradient buckets (payload part i is bucket i): with whole
// variables on the servers (collective.parameter_server.variables) a bucket's push and pull
// reach only the servers holding one of its variables.
RunSize check_run_size(const Scenario& scenario, int p, const Payload& payload, size_t segment_elems,
                       const std::vector<Bucket>& buckets = {});

// Whether a run holds each gradient bucket's carried data only while its collective runs
// (docs/training.md#carried-data-in-flight), not every bucket's for the whole run: layered
// allreduce training whose buckets need nothing of each other's data or of an earlier
// round's (no sharding, no model, no recovery, no switch or server actors). The payload's
// layout is the same either way: only what memory holds at once differs.
bool carries_buckets_in_flight(const Scenario& scenario);

}  // namespace collsim
