#pragma once
// The stated limits of a run (README "Limits"), checked before anything is built or
// simulated, so that an input beyond them is refused at once with what it would need
// instead of running for hours or running out of memory.
#include <cstdint>
#include <string>

#include "scenario/scenario.hpp"
#include "sim/payload.hpp"

namespace collsim {

constexpr int max_workers = 1'000'000;           // P, in scenarios and in `collsim model`
constexpr long long max_run_hosts = 65'536;      // hosts of a platform a run builds
constexpr double max_run_messages = 1e8;         // messages a run may simulate (estimated)
constexpr double max_carried_bytes = 8.0 * (1 << 30);  // buffers held in memory, all ranks

// The hosts of a generator string, or of a platform file by a scan of its XML (hosts,
// and the radicals of clusters), without building it. Throws InputError beyond
// max_run_hosts.
// Returns the number of hosts.
long long check_platform_size(const std::string& topology, const std::string& scenario_dir);

// Estimated messages and memory of the run of `scenario` with p ranks: at most
// 2 p (p - 1) messages per collective (the ring's count; the others send fewer), plus
// 2 p per segment of the pipelined algorithms (pipeline, binary-tree, double-binary-tree,
// and auto, which may choose them), times the rounds. Throws InputError beyond
// max_run_messages or max_carried_bytes.
void check_run_size(const Scenario& scenario, int p, const Payload& payload, size_t segment_elems);

}  // namespace collsim
