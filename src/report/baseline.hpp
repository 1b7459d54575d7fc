#pragma once
// Baselines: one small JSON file per ready scenario with the metrics `collsim compare`
// checks, kept in the repository so that a change of simulated timings shows in review.
#include <nlohmann/json.hpp>
#include <string>

namespace collsim {

constexpr const char* baseline_format = "collsim-baseline/1";

// Runs every scenario file under `scenarios_dir` (each in its own process) and writes
// `out_dir/<path relative to scenarios_dir>` with its baseline. Returns how many.
int update_baselines(const std::string& scenarios_dir, const std::string& out_dir, bool quiet);

}  // namespace collsim
