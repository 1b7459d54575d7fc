#include "report/baseline.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <set>

#include "report/commands.hpp"
#include "sweep/sweep_spec.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"

namespace fs = std::filesystem;

namespace collsim {

int update_baselines(const std::string& scenarios_dir, const std::string& out_dir, bool quiet) {
  if (!fs::is_directory(scenarios_dir))
    throw InputError(fmt::format("--scenarios: '{}' is not a folder", scenarios_dir));
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(scenarios_dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json" && !is_sweep_file(entry.path().string()))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  // Every target checked before any scenario runs; none may replace a scenario (the
  // scenarios are read by the children, so the parent checks them here).
  std::set<fs::path> scenarios;
  for (const auto& file : files) scenarios.insert(fs::weakly_canonical(file));
  for (const auto& file : files) {
    const fs::path target = fs::path(out_dir) / fs::relative(file, scenarios_dir);
    check_output_path(target.string(), "--out");
    if (scenarios.count(fs::weakly_canonical(target)))
      throw InputError(fmt::format("--out: '{}' is one of the scenarios; write the baselines to another folder",
                                   target.string()));
  }
  int written = 0;
  OutputBatch batch;  // all baselines or none: a failed scenario leaves the folder as it was
  for (const auto& file : files) {
    // One engine per process: each scenario runs in a child.
    const ChildOutcome outcome = run_in_child([&] { return baseline_of_scenario(file.string()).dump(); });
    if (outcome.exit_code != 0)
      throw InputError(fmt::format("baseline: {} failed: {}", file.string(), outcome.output));
    auto baseline = nlohmann::json::parse(outcome.output);
    // Named from the repository: the scenarios folder's parent ("scenarios/quickstart.json"),
    // whether the folder was given with a trailing slash or not.
    fs::path folder = fs::absolute(scenarios_dir).lexically_normal();
    if (!folder.has_filename()) folder = folder.parent_path();
    const fs::path scenarios_parent = folder.parent_path();
    baseline["scenario_file"] = fs::absolute(file).lexically_normal().lexically_relative(scenarios_parent).string();
    const fs::path target = fs::path(out_dir) / fs::relative(file, scenarios_dir);
    write_file_atomically(target.string(), baseline.dump(2) + "\n", "--out");
    ++written;
    if (!quiet) std::cout << fmt::format("{}  {}\n", target.string(), baseline["identity"].get<std::string>());
  }
  batch.commit();
  return written;
}

}  // namespace collsim
