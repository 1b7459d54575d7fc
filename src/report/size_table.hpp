#pragma once
// `collsim run --sizes 8B:1GiB:x2`: one run per size, each in a child process (several at
// once, as a sweep runs its points), printed as nccl-tests prints its table: size, count,
// type, redop, time, algbw, busbw, #wrong, and the average busbw at the end.
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace collsim {

// "FROM:TO:xFACTOR" (nccl-tests' -b, -e, -f): FROM, FROM x FACTOR, ... up to TO, sizes
// with units ("8B", "1GiB"); FACTOR a whole number >= 2. Throws InputError naming `field`.
std::vector<double> parse_size_range(const std::string& text, const std::string& field);

struct SizeTableOptions {
  int jobs = 0;          // children at once (0: one per core)
  std::string csv_path;  // also write the rows as CSV
  bool quiet = false;
};

// Runs every scenario (one per size, otherwise the same) and prints the table; exit status
// 1 if a size fails verification or does not finish.
int run_size_table(const std::vector<Scenario>& sizes, const SizeTableOptions& options);

}  // namespace collsim
