#pragma once
// Running a sweep: every point in its own process (one SimGrid engine per process), up to
// --jobs at a time, with progress, --resume, --shard and clean interruption.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collsim {

struct SweepOptions {
  std::string out = "results.csv";
  int jobs = 0;                              // 0: the number of cores
  std::optional<std::pair<int, int>> shard;  // K/N: run the points with index % N == K-1
  bool resume = false;
  bool quiet = false;
  std::string plot;                          // SVG of simulated_time over the first numeric axis
  bool plan = false;                         // list the points (checked) and run nothing
};

// Parses "K/N" (1 <= K <= N).
std::pair<int, int> parse_shard(const std::string& text);

// Returns 0 when every point ran, 1 when some failed, 130 when interrupted.
int run_sweep(const std::string& sweep_path, const SweepOptions& options);

// Joins shard outputs into one table; the same point in two parts must agree.
int merge_sweep_results(const std::vector<std::string>& parts, const std::string& out);

// `collsim sweep plot RESULTS --plot OUT.svg [--x AXIS] [--y METRIC] [--series AXIS]`
struct PlotSpec;
int plot_sweep_results(const std::string& results, const std::string& out, const PlotSpec& spec);

// `collsim sweep show RESULTS [--metrics A,B] [--sort COLUMN]`: the table in human units on stdout.
struct ShowSpec;
int show_sweep_results(const std::string& results, const ShowSpec& spec);

}  // namespace collsim
