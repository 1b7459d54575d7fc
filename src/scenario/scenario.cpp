#include "scenario/scenario.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "platform/platform.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// Unknown keys are errors: a typo must never be silently ignored.
void check_keys(const json& object, const std::string& where, const std::vector<std::string>& allowed) {
  if (!object.is_object())
    throw InputError(fmt::format("{}: must be a JSON object", where.empty() ? "scenario" : where));
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    throw InputError(fmt::format("{}: unknown key{}; allowed: {}", join_path(where, key), did_you_mean(key, allowed),
                                 join(allowed)));
  }
}

std::string get_string(const json& value, const std::string& field) {
  if (!value.is_string()) throw InputError(fmt::format("{}: must be a string, got {}", field, value.dump()));
  return value.get<std::string>();
}

long long get_integer(const json& value, const std::string& field, long long min, long long max) {
  if (!value.is_number_integer() && !value.is_number_unsigned())
    throw InputError(fmt::format("{}: must be an integer, got {}", field, value.dump()));
  const long long number = value.get<long long>();
  if (number < min || number > max)
    throw InputError(fmt::format("{}: {} is out of range; allowed: {} to {}", field, number, min, max));
  return number;
}

// Sizes and times may be unit strings ("64MiB", "20ms") or plain numbers (bytes, seconds).
double get_quantity(const json& value, const std::string& field, double (*parse)(std::string_view, std::string_view)) {
  if (value.is_number()) {
    const double number = value.get<double>();
    if (number < 0)
      throw InputError(fmt::format("{}: {} is negative; must be {}", field, value.dump(),
                                   parse == parse_time ? ">= 0 seconds" : "> 0 bytes"));
    return number;
  }
  if (value.is_string()) return parse(value.get<std::string>(), field);
  throw InputError(fmt::format("{}: must be a number or a string with a unit, got {}", field, value.dump()));
}

CollectiveSpec parse_collective_spec(const json& object) {
  check_keys(object, "collective", {"kind", "algorithm", "size", "dtype", "op", "root", "segment", "carried_elements"});
  CollectiveSpec spec;
  if (object.contains("kind")) spec.kind = parse_collective(get_string(object["kind"], "collective.kind"), "collective.kind");
  spec.algorithm = spec.kind == Collective::allreduce ? "ring" : "binomial";
  if (object.contains("algorithm")) spec.algorithm = get_string(object["algorithm"], "collective.algorithm");
  find_algorithm(spec.kind, spec.algorithm, "collective.algorithm");
  if (object.contains("dtype")) spec.dtype = parse_dtype(get_string(object["dtype"], "collective.dtype"), "collective.dtype");
  if (object.contains("op")) spec.op = parse_op(get_string(object["op"], "collective.op"), "collective.op");
  if (object.contains("size")) spec.size = get_quantity(object["size"], "collective.size", parse_size);
  if (spec.size <= 0) throw InputError("collective.size: must be > 0 bytes");
  const double elements = spec.size / static_cast<double>(dtype_size(spec.dtype));
  if (elements != std::floor(elements))
    throw InputError(fmt::format("collective.size: {} bytes is not a whole number of {} elements ({} bytes each)",
                                 spec.size, dtype_name(spec.dtype), dtype_size(spec.dtype)));
  if (object.contains("root")) spec.root = static_cast<int>(get_integer(object["root"], "collective.root", 0, 1 << 30));
  if (object.contains("segment")) spec.segment = get_quantity(object["segment"], "collective.segment", parse_size);
  if (spec.segment <= 0) throw InputError("collective.segment: must be > 0 bytes");
  if (object.contains("carried_elements"))
    spec.carried_elements =
        static_cast<uint64_t>(get_integer(object["carried_elements"], "collective.carried_elements", 1, 1LL << 32));
  return spec;
}

TrainingSpec parse_training(const json& object) {
  check_keys(object, "training", {"rounds", "compute"});
  TrainingSpec spec;
  if (object.contains("rounds")) spec.rounds = static_cast<int>(get_integer(object["rounds"], "training.rounds", 1, 1'000'000));
  if (object.contains("compute")) spec.compute = get_quantity(object["compute"], "training.compute", parse_time);
  return spec;
}

}  // namespace

json load_scenario_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read the scenario file (does it exist?)", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& error) {
    std::string message = error.what();
    const auto cut = message.find("] ");
    if (cut != std::string::npos) message = message.substr(cut + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", path, message));
  }
}

void set_path(json& document, const std::string& path, const json& value) {
  json* node = &document;
  std::stringstream stream(path);
  std::vector<std::string> keys;
  for (std::string key; std::getline(stream, key, '.');) keys.push_back(key);
  if (keys.empty() || std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.empty(); }))
    throw InputError(fmt::format("--set: '{}' is not a key path such as collective.algorithm", path));
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool last = i + 1 == keys.size();
    if (node->is_array()) {
      size_t index = 0;
      try {
        index = std::stoul(keys[i]);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--set: '{}' in '{}' must be an array index", keys[i], path));
      }
      if (index >= node->size())
        throw InputError(fmt::format("--set: index {} in '{}' is past the end ({} entries)", index, path, node->size()));
      node = &(*node)[index];
    } else {
      if (!node->is_object() && !node->is_null())
        throw InputError(fmt::format("--set: cannot set '{}': '{}' is not an object", path, keys[i - 1]));
      node = &(*node)[keys[i]];
    }
    if (last) *node = value;
  }
}

void apply_override(json& document, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InputError(fmt::format("--set: '{}' is not KEY.PATH=VALUE (example: --set collective.algorithm=naive)",
                                 assignment));
  const std::string text = assignment.substr(equals + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::parse_error&) {
    value = text;  // a bare word such as naive or 64MiB
  }
  set_path(document, assignment.substr(0, equals), value);
}

Scenario parse_scenario(const json& document, const std::string& source_dir) {
  check_keys(document, "", {"name", "description", "topology", "network", "workers", "collective", "training",
                            "placement", "cfg", "seed", "faults", "recovery"});
  for (const char* later : {"faults", "recovery"})
    if (document.contains(later))
      throw InputError(fmt::format("{}: fault injection and recovery are not available in collsim {} yet", later,
                                   COLLSIM_VERSION));
  Scenario scenario;
  scenario.source_dir = source_dir;
  if (document.contains("name")) scenario.name = get_string(document["name"], "name");
  if (document.contains("description") && !document["description"].is_string() && !document["description"].is_array())
    throw InputError("description: must be a string or a list of strings");
  if (document.contains("topology")) {
    scenario.topology = get_string(document["topology"], "topology");
    if (!parse_generator(scenario.topology, "topology"))
      resolve_platform_file(scenario.topology, source_dir, "topology");
  }
  if (document.contains("network"))
    scenario.network = parse_network_model(get_string(document["network"], "network"), "network");
  if (document.contains("workers"))
    scenario.workers = static_cast<int>(get_integer(document["workers"], "workers", 1, 1'000'000));
  if (document.contains("collective")) scenario.collective = parse_collective_spec(document["collective"]);
  else scenario.collective = parse_collective_spec(json::object());
  if (document.contains("training")) scenario.training = parse_training(document["training"]);
  if (document.contains("placement")) {
    if (!document["placement"].is_array()) throw InputError("placement: must be a list of host names");
    for (size_t i = 0; i < document["placement"].size(); ++i)
      scenario.placement.push_back(get_string(document["placement"][i], fmt::format("placement.{}", i)));
  }
  if (document.contains("cfg")) {
    if (!document["cfg"].is_array()) throw InputError("cfg: must be a list of \"KEY:VALUE\" SimGrid options");
    for (size_t i = 0; i < document["cfg"].size(); ++i) {
      scenario.cfg.push_back(get_string(document["cfg"][i], fmt::format("cfg.{}", i)));
      check_simgrid_option(scenario.cfg.back(), fmt::format("cfg.{}", i));
    }
  }
  if (document.contains("seed"))
    scenario.seed = static_cast<uint64_t>(get_integer(document["seed"], "seed", 0, std::numeric_limits<long long>::max()));

  if (scenario.workers && scenario.collective.root >= *scenario.workers)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root,
                                 *scenario.workers - 1));
  if (!scenario.placement.empty() && scenario.workers &&
      static_cast<int>(scenario.placement.size()) != *scenario.workers)
    throw InputError(fmt::format("placement: {} hosts listed for {} workers", scenario.placement.size(),
                                 *scenario.workers));
  if (scenario.topology.empty()) {
    const int workers = scenario.workers.value_or(8);
    scenario.workers = workers;
    scenario.topology = fmt::format("star:{}", workers);
  }
  return scenario;
}

namespace {
// Whole numbers of bytes print as integers (1048576, not 1048576.0).
json bytes_json(double bytes) {
  if (bytes == std::floor(bytes) && bytes < 1.8e19) return static_cast<uint64_t>(bytes);
  return bytes;
}
}  // namespace

json scenario_to_json(const Scenario& s, int workers, const std::string& topology) {
  json collective{{"kind", collective_name(s.collective.kind)},
                  {"algorithm", s.collective.algorithm},
                  {"size", bytes_json(s.collective.size)},
                  {"dtype", dtype_name(s.collective.dtype)},
                  {"op", op_name(s.collective.op)},
                  {"root", s.collective.root},
                  {"segment", bytes_json(s.collective.segment)}};
  if (s.collective.carried_elements) collective["carried_elements"] = *s.collective.carried_elements;
  return json{{"name", s.name},
              {"topology", topology},
              {"network", network_model_name(s.network)},
              {"workers", workers},
              {"collective", collective},
              {"training", {{"rounds", s.training.rounds}, {"compute", s.training.compute}}},
              {"placement", s.placement},
              {"cfg", s.cfg},
              {"seed", s.seed}};
}

}  // namespace collsim
