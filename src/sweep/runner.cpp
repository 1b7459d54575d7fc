#include "sweep/runner.hpp"

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

#include "run/run_scenario.hpp"
#include "scenario/scenario.hpp"
#include "sweep/plot.hpp"
#include "sweep/plot_scale.hpp"
#include "sweep/show.hpp"
#include "sweep/results.hpp"
#include "util/atomic_file.hpp"
#include "sweep/sweep_spec.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }

using Clock = std::chrono::steady_clock;

// One line per finished point when stderr is a file or a pipe; a bar that redraws itself
// on a terminal.
class Progress {
public:
  Progress(size_t total, bool quiet) : total_(total), quiet_(quiet), terminal_(::isatty(2)), start_(Clock::now()) {}

  void point_done(size_t done, const std::string& what) {
    if (quiet_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double eta = done == 0 ? 0 : elapsed / static_cast<double>(done) * static_cast<double>(total_ - done);
    if (!terminal_) {
      std::cerr << fmt::format("sweep: {}/{} {} (ETA {:.0f} s)\n", done, total_, what, eta);
      return;
    }
    const size_t width = 30, filled = total_ == 0 ? width : width * done / total_;
    std::cerr << fmt::format("\r[{}{}] {}/{}  ETA {:.0f} s   ", std::string(filled, '#'), std::string(width - filled, '.'),
                             done, total_, eta)
              << std::flush;
    if (done == total_) std::cerr << "\n";
  }

private:
  size_t total_;
  bool quiet_, terminal_;
  Clock::time_point start_;
};

// The same cell, whether it was read back from a table (CSV cells come back as numbers
// or strings) or comes from the sweep file.
bool same_cell(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  auto text = [](const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
  return text(a) == text(b);
}

// --resume extends a table only if this sweep wrote it: every row's point exists here,
// with the same axis values.
void check_resumed_rows(const std::vector<ResultRow>& rows, const std::vector<SweepPoint>& points,
                        const std::string& out) {
  for (const ResultRow& row : rows) {
    const bool known = row.point >= 0 && row.point < static_cast<int>(points.size());
    const SweepPoint* point = known ? &points[static_cast<size_t>(row.point)] : nullptr;
    bool same = point != nullptr && point->settings.size() == row.axes.size();
    for (size_t i = 0; same && i < row.axes.size(); ++i)
      same = row.axes[i].first == point->settings[i].first && same_cell(row.axes[i].second, point->settings[i].second);
    if (!same)
      throw InputError(fmt::format("--resume: '{}' was written by another sweep (its point {} is not this sweep's "
                                   "point {}); give a new --out, or remove the table to start again",
                                   out, row.point, row.point));
  }
}

// Temporaries of tables a killed sweep was writing ("results.csv.tmp.PID" whose PID is gone).
void remove_stale_temporaries(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path target = fs::absolute(out);
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_regular_file(ec)) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

ResultRow row_of(const SweepPoint& point) {
  ResultRow row;
  row.point = point.index;
  row.axes = point.settings;
  return row;
}

// Whether this shard (--shard K/N) runs `point` (every point without one).
bool in_shard(const SweepPoint& point, const SweepOptions& options) {
  return !options.shard || point.index % options.shard->second == options.shard->first - 1;
}

// Every output checked before any point runs.
// Every output checked before any point runs; the plot the sweep file asks for.
PlotSpec check_outputs(const Sweep& sweep, const std::vector<SweepPoint>& points, const SweepOptions& options) {
  check_output_path(options.out, "--out");
  if (options.plot.empty()) return {};
  check_output_path(options.plot, "--plot");
  PlotSpec spec = plot_spec_from_json(sweep.plot);
  if (spec.title.empty()) spec.title = fmt::format("{}: {}", sweep.name, metric_title(spec.y));
  // A plot that cannot be drawn (no numeric axis with several values) is refused now,
  // not after every point ran: drawn once on the points with a stand-in value.
  std::vector<ResultRow> planned;
  for (const SweepPoint& point : points) {
    planned.push_back(row_of(point));
    planned.back().metrics = {{spec.y, 1.0}};
  }
  plot_svg(planned, spec);
  return spec;
}

// --resume: the rows of the points done already (`done` gets their indices); failed points run again.
std::vector<ResultRow> resumed_rows(const std::vector<SweepPoint>& points, const SweepOptions& options,
                                    std::set<int>& done) {
  std::vector<ResultRow> rows;
  if (options.resume) remove_stale_temporaries(options.out);
  if (!options.resume || ::access(options.out.c_str(), F_OK) != 0) return rows;
  std::vector<ResultRow> resumed = read_results(options.out, "--resume");
  release_input_file(options.out);  // read, and rewritten on purpose
  check_resumed_rows(resumed, points, options.out);
  for (ResultRow& row : resumed) {
    if (row.status != "ok") continue;  // failed points run again
    done.insert(row.point);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  int k = 0, n = 0;
  char slash = 0;
  std::stringstream stream(text);
  if (!(stream >> k >> slash >> n) || slash != '/' || !stream.eof() || n < 1 || k < 1 || k > n)
    throw InputError(fmt::format("--shard: '{}' is not K/N with 1 <= K <= N (e.g. 2/4)", text));
  return {k, n};
}

int run_sweep(const std::string& sweep_path, const SweepOptions& options) {
  const Sweep sweep = load_sweep(sweep_path);
  const std::vector<SweepPoint> points = expand_sweep(sweep);  // validates every point first
  const std::vector<std::string> columns = sweep.columns();
  if (options.plan) {
    for (const SweepPoint& point : points)
      if (in_shard(point, options)) std::cout << fmt::format("{}  {}\n", point.index, describe_point(point));
    std::cout << fmt::format("{} points, all valid\n", points.size());
    return 0;
  }
  const PlotSpec plot_spec = check_outputs(sweep, points, options);
  std::set<int> done;
  std::vector<ResultRow> rows = resumed_rows(points, options, done);
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& point : points)
    if (in_shard(point, options) && !done.count(point.index)) todo.push_back(&point);

  const int jobs = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (!options.quiet)
    std::cerr << fmt::format("sweep {}: {} points{}, {} to run, {} at a time, results in {}\n", sweep.name,
                             points.size(), options.shard ? fmt::format(" (shard {}/{})", options.shard->first,
                                                                        options.shard->second)
                                                          : "",
                             todo.size(), jobs, options.out);
  write_results(options.out, rows, columns, "--out");

  interrupted = 0;
  auto previous_handler = std::signal(SIGINT, on_interrupt);
  Progress progress(todo.size(), options.quiet);
  size_t finished = 0, failed = 0;
  run_children(
      todo.size(), jobs,
      [&sweep, &todo](size_t i) {
        std::signal(SIGINT, SIG_DFL);
        const Scenario scenario = parse_scenario(todo[i]->scenario, sweep.source_dir);
        return run_metrics(scenario).dump();
      },
      [&](size_t i, const ChildOutcome& outcome, double seconds) {
        ResultRow row = row_of(*todo[i]);
        row.wall_time = seconds;
        if (outcome.exit_code == 0) {
          row.metrics = nlohmann::json::parse(outcome.output);
          row.metrics.erase("round_times");
          row.metrics.erase("tolerance");
          row.metrics.erase("algorithm");
        } else {
          row.status = "failed";
          row.error = outcome.output.empty() ? fmt::format("exit status {}", outcome.exit_code) : outcome.output;
          ++failed;
        }
        rows.push_back(row);
        write_results(options.out, rows, columns, "--out");  // incremental: a crash keeps what is done
        progress.point_done(++finished, describe_point(*todo[i]));
      },
      [] { return interrupted != 0; });
  if (interrupted) {
    // Points still running were dropped (their children got the same Ctrl-C).
    std::signal(SIGINT, previous_handler);
    std::cerr << fmt::format("\nsweep: interrupted; {} of {} points done are in {} (--resume goes on from there)\n",
                             rows.size(), points.size(), options.out);
    return 130;
  }
  std::signal(SIGINT, previous_handler);
  if (!options.plot.empty()) write_file_atomically(options.plot, plot_svg(rows, plot_spec), "--plot");
  if (!options.quiet)
    std::cerr << fmt::format("sweep: {} points done, {} failed; results in {}\n", finished, failed, options.out);
  return failed > 0 ? 1 : 0;
}

int plot_sweep_results(const std::string& results, const std::string& out, const PlotSpec& spec) {
  write_file_atomically(out, plot_svg(read_results(results, "RESULTS"), spec), "--plot");
  return 0;
}

int merge_sweep_results(const std::vector<std::string>& parts, const std::string& out) {
  if (parts.empty()) throw InputError("sweep merge: give the part files to merge");
  std::map<int, ResultRow> merged;
  std::vector<std::string> columns;
  for (const auto& part : parts) {
    for (ResultRow& row : read_results(part, "sweep merge")) {
      for (const auto& [name, value] : row.axes)
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
      auto [it, inserted] = merged.emplace(row.point, row);
      if (!inserted && (it->second.axes != row.axes || it->second.metrics != row.metrics))
        throw InputError(fmt::format("sweep merge: point {} differs between parts ({})", row.point, part));
    }
  }
  std::vector<ResultRow> rows;
  for (auto& [point, row] : merged) rows.push_back(std::move(row));
  if (rows.empty()) throw InputError(fmt::format("sweep merge: the {} part(s) hold no points; nothing to merge", parts.size()));
  check_output_path(out, "--out");
  write_results(out, rows, columns, "--out");
  std::cerr << fmt::format("sweep merge: {} points from {} parts into {}\n", rows.size(), parts.size(), out);
  return 0;
}

int show_sweep_results(const std::string& results, const ShowSpec& spec) {
  std::cout << show_results(read_results(results, "RESULTS"), spec);
  return 0;
}

}  // namespace collsim
