#pragma once
// A sweep (docs/sweeps.md): a base scenario and axes, each a scenario field path with a
// list of values or a range; the points are the cartesian product of the axes, where a
// zip group (several fields whose lists have the same length) counts as one axis.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collsim {

// The most points one sweep runs (README "Limits").
constexpr size_t max_sweep_points = 1'000'000;

struct SweepAxis {
  std::vector<std::string> paths;               // one path, or the fields of a zip group
  std::vector<std::vector<nlohmann::json>> values;  // values[i] = the i-th value of each path
};

struct SweepPoint {
  int index = 0;                                // position in the full sweep
  std::vector<std::pair<std::string, nlohmann::json>> settings;  // path -> value
  nlohmann::json scenario;                      // the base with the settings applied
};

struct Sweep {
  std::string name;
  std::string source_dir;                       // for relative paths in the scenario
  nlohmann::json base;
  std::vector<SweepAxis> axes;
  nlohmann::json plot;                          // the "plot" object for --plot (sweep/plot.hpp), or null
  std::vector<std::string> columns() const;     // every axis path, in order
};

// The ready sweeps sit in sweeps/ folders among the scenarios (scenarios/sweeps/,
// scenarios/labs/sweeps/); every other JSON file there is a scenario.
bool is_sweep_file(const std::string& path);

// Reads SWEEP.json (InputError naming the field on bad input).
Sweep load_sweep(const std::string& path);
// (ordered: the axes keep the order in which the file lists them)
Sweep parse_sweep(const nlohmann::ordered_json& document, const std::string& source_dir);

// Every point, in a fixed order (the first axis varies slowest). Each point's scenario is
// validated; an invalid one is named with its axis values.
std::vector<SweepPoint> expand_sweep(const Sweep& sweep);

// "workers=8, collective.algorithm=ring"
std::string describe_point(const SweepPoint& point);

// Values of a range: {"from": "1KiB", "to": "1GiB", "times": 4} (geometric) or
// {"from": 2, "to": 64, "step": 2} (linear); unit strings keep their unit kind.
std::vector<nlohmann::json> expand_range(const nlohmann::json& range, const std::string& field);

}  // namespace collsim
