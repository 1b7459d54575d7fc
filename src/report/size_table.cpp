#include "report/size_table.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <iostream>
#include <sstream>
#include <thread>

#include "run/run_scenario.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

// nccl-tests' sizes (-b 8 -e 128M): a number then K, M or G (either case) counts in 1024s,
// as its parsesize does (nccl-tests src/common.cu); collsim's own units ("1GiB", "30MB")
// pass unchanged.
std::string nccl_size(const std::string& part) {
  if (part.size() < 2 || !std::isdigit(static_cast<unsigned char>(part[part.size() - 2]))) return part;
  const std::string number = part.substr(0, part.size() - 1);
  switch (part.back()) {
    case 'K': case 'k': return number + "KiB";
    case 'M': case 'm': return number + "MiB";
    case 'G': case 'g': return number + "GiB";
    default: return part;
  }
}

// A size of the range: an unknown unit is refused with every unit a range takes, nccl-tests'
// and collsim's (parse_size alone lists only its own).
double range_size(const std::string& part, const std::string& field) {
  try {
    return parse_size(nccl_size(part), field);
  } catch (const InputError& error) {
    if (std::string_view(error.what()).find(": unknown unit ") == std::string_view::npos) throw;
    throw InputError(fmt::format("{}: unknown unit in '{}' (allowed: K, M, G in either case as nccl-tests' -b and -e "
                                 "read them, in 1024s; B, KiB, MiB, GiB, TiB, kB, MB, GB, TB; none: bytes)",
                                 field, part));
  }
}

}  // namespace

std::vector<double> parse_size_range(const std::string& text, const std::string& field) {
  const auto fail = [&](const std::string& problem) -> InputError {
    return InputError(
        fmt::format("{}: '{}': {}; give FROM:TO[:xFACTOR], e.g. 8:1G or 8B:1GiB:x4", field, text, problem));
  };
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  // the factor the nccl-tests runs one meets pass (-f 2); nccl-tests' own default, steps of
  // 1 MiB (-i), would be 1024 runs from 8 B to 1 GiB
  if (parts.size() == 2) parts.emplace_back("x2");
  if (parts.size() != 3)
    throw fail(fmt::format("{} part{} given, 2 or 3 expected", parts.size(), parts.size() == 1 ? "" : "s"));
  const double from = range_size(parts[0], field), to = range_size(parts[1], field);
  int factor = 0;
  const std::string& f = parts[2];
  const auto [end, error] = f.size() > 1 ? std::from_chars(f.data() + 1, f.data() + f.size(), factor)
                                         : std::from_chars_result{f.data(), std::errc::invalid_argument};
  if (f.empty() || f[0] != 'x' || error != std::errc() || end != f.data() + f.size() || factor < 2 || factor > 1024)
    throw fail(fmt::format("the factor '{}' must be x and a whole number from 2 to 1024", f));
  if (from <= 0) throw fail("FROM must be > 0 bytes");
  if (to < from) throw fail("TO is smaller than FROM");
  std::vector<double> sizes;
  for (double size = from; size <= to * (1 + 1e-12); size *= factor) sizes.push_back(size);
  if (sizes.size() > 64) throw fail(fmt::format("{} sizes; at most 64", sizes.size()));
  return sizes;
}

namespace {

// One row of the table, as nccl-tests names its columns.
struct Row {
  double size = 0;
  double count = 0;
  std::string type, redop;
  std::string algorithm;  // the one that ran (auto chooses per size)
  double time_us = 0, algbw = 0, busbw = 0;  // GB/s (10^9 bytes/s), as nccl-tests
  bool verified = false;
  bool stalled = false;
  uint64_t wrong = 0;     // elements outside their tolerance, every checked rank
  std::string tolerance;  // the verification's, in words
  std::string error;      // the child failed
};

Row row_of(const Scenario& scenario, const ChildOutcome& outcome) {
  Row row;
  row.size = scenario.collective.size;
  row.count = scenario.collective.size / static_cast<double>(dtype_size(scenario.collective.dtype));
  row.type = std::string(dtype_name(scenario.collective.dtype));
  const Collective kind = scenario.collective.kind;
  const bool reduces = kind == Collective::allreduce || kind == Collective::reduce || kind == Collective::reduce_scatter;
  row.redop = reduces ? std::string(op_name(scenario.collective.op)) : "none";
  if (outcome.exit_code != 0) {
    row.error = outcome.output.empty() ? fmt::format("exit status {}", outcome.exit_code) : outcome.output;
    return row;
  }
  const auto metrics = nlohmann::json::parse(outcome.output);
  row.algorithm = metrics["algorithm"].get<std::string>();
  row.time_us = metrics["collective_time"].get<double>() * 1e6;
  row.algbw = metrics["algbw"].get<double>() / 1e9;
  row.busbw = metrics["busbw"].get<double>() / 1e9;
  row.stalled = metrics["stalled"].get<bool>();
  row.verified = metrics["verified"].get<bool>() && !row.stalled;
  row.wrong = metrics["wrong_elements"].get<uint64_t>();
  row.tolerance = metrics["tolerance"].get<std::string>();
  return row;
}

// #wrong: as nccl-tests, the count of wrong elements over every checked rank (carried
// elements: the ones kept in memory); "stall" when the run never completed.
std::string wrong_of(const Row& row) { return row.stalled ? "stall" : fmt::format("{}", row.wrong); }

}  // namespace

int run_size_table(const std::vector<Scenario>& sizes, const SizeTableOptions& options) {
  const int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Row> rows(sizes.size());
  run_children(
      sizes.size(), jobs, [&sizes](size_t i) { return run_metrics(sizes[i]).dump(); },
      [&](size_t i, const ChildOutcome& outcome, double) { rows[i] = row_of(sizes[i], outcome); }, [] { return false; });

  const Scenario& first = sizes.front();
  std::string table = fmt::format(
      "# collsim {} / {}, {} on {}, {} network\n", collective_name(first.collective.kind), first.collective.algorithm,
      first.workers ? fmt::format("{} ranks", *first.workers) : "every host", first.topology.empty() ? "star:8" : first.topology,
      network_model_name(first.network));
  table += fmt::format("#{:>12} {:>12} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7}  {}\n", "size", "count", "type", "redop",
                       "time", "algbw", "busbw", "#wrong", "algorithm");
  table += fmt::format("#{:>12} {:>12} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7}\n", "(B)", "(elements)", "", "", "(us)",
                       "(GB/s)", "(GB/s)", "");
  std::string csv = "size,count,type,redop,time_us,algbw_GBps,busbw_GBps,wrong,algorithm\n";
  double busbw_sum = 0;
  int measured = 0;  // rows with a bandwidth (not failed, not stalled)
  bool all_good = true;
  for (const Row& row : rows) {
    if (!row.error.empty()) {
      table += fmt::format(" {:>12.0f} {:>12.0f} {:>9} {:>6}  failed: {}\n", row.size, row.count, row.type, row.redop,
                           row.error);
      csv += fmt::format("{:.0f},{:.0f},{},{},,,,fail,\n", row.size, row.count, row.type, row.redop);
      all_good = false;
      continue;
    }
    all_good = all_good && row.verified;
    if (row.stalled) {  // a stalled run moved part of its bytes: no time or bandwidth to speak of
      table += fmt::format(" {:>12.0f} {:>12.0f} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7}  {}\n", row.size, row.count,
                           row.type, row.redop, "-", "-", "-", wrong_of(row), row.algorithm);
      csv += fmt::format("{:.0f},{:.0f},{},{},,,,{},{}\n", row.size, row.count, row.type, row.redop, wrong_of(row),
                         row.algorithm);
      continue;
    }
    busbw_sum += row.busbw;
    ++measured;
    table += fmt::format(" {:>12.0f} {:>12.0f} {:>9} {:>6} {:>11.2f} {:>8.2f} {:>8.2f} {:>7}  {}\n", row.size, row.count,
                         row.type, row.redop, row.time_us, row.algbw, row.busbw, wrong_of(row), row.algorithm);
    csv += fmt::format("{:.0f},{:.0f},{},{},{:.17g},{:.17g},{:.17g},{},{}\n", row.size, row.count, row.type, row.redop,
                       row.time_us, row.algbw, row.busbw, wrong_of(row), row.algorithm);
  }
  // as nccl-tests: the wrong elements of every size, then the average busbw of every size
  // printed; and what counted as wrong (the tolerance depends on the type, the op and p, the
  // same for every size)
  uint64_t wrong = 0;
  std::string tolerance;
  for (const Row& row : rows) {
    wrong += row.wrong;
    if (row.error.empty()) tolerance = row.tolerance;
  }
  if (!tolerance.empty())
    table += fmt::format("# Out of bounds values : {} {} (#wrong: carried elements beyond {})\n", wrong,
                         all_good ? "OK" : "FAILED", tolerance);
  table += fmt::format("# Avg bus bandwidth    : {:.4f} GB/s\n", measured > 0 ? busbw_sum / measured : 0.0);
  if (!options.csv_path.empty()) write_file_atomically(options.csv_path, csv, "--csv");
  if (!options.quiet) std::cout << table;
  return all_good ? 0 : 1;
}

}  // namespace collsim
