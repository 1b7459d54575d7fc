// The SimGrid options collsim lets through (--cfg, a scenario's cfg, a platform file's
// <config> props): an allow-list, each key with the values SimGrid 3.32 survives. Anything
// else is refused in one line: an option collsim does not know may write files (tracing/*),
// trap (debug/breakpoint), run actors in parallel (contexts/nthreads) or stop the engine.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>

#include "platform/network_model.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {
namespace {

// A key's allowed values: one of `choices`, or a number in (above, at_most] (or
// [0, at_most] when `above` is negative).
struct OptionRule {
  std::vector<std::string> choices;
  double above = 0;
  double at_most = 0;
};

const std::vector<std::string> switches{"0", "1", "no", "yes", "false", "true", "off", "on"};

const std::map<std::string, OptionRule>& option_rules() {
  // Bounds: precisions and factors beyond these make every time 0 or infinite; stacks are
  // KiB (SimGrid traps under 16 KiB; 1 GiB per actor would not fit 65,536 actors anyway).
  static const std::map<std::string, OptionRule> rules{
      {"network/model", {{"LV08", "CM02", "SMPI", "IB"}}},
      {"network/optim", {{"Lazy", "Full", "TI"}}},
      {"cpu/optim", {{"Lazy", "Full", "TI"}}},
      {"cpu/model", {{"Cas01"}}},
      {"host/model", {{"default", "compound"}}},
      {"contexts/factory", {{"raw", "thread", "ucontext", "boost"}}},
      {"contexts/synchro", {{"futex", "posix", "busy_wait"}}},
      // parallel contexts run actors of one scheduling round in threads at once: collsim's
      // shared run state (the message log, counters) is not made for that
      {"contexts/nthreads", {{"1"}}},
      {"plugin", {{"host_energy", "link_energy", "link_load", "host_load", "host_dvfs"}}},
      {"network/crosstraffic", {switches}},
      {"network/maxmin-selective-update", {switches}},
      {"cpu/maxmin-selective-update", {switches}},
      {"surf/precision", {{}, 0, 1}},
      {"maxmin/precision", {{}, 0, 1}},
      {"network/bandwidth-factor", {{}, 0, 1e6}},
      {"network/latency-factor", {{}, 0, 1e6}},
      {"network/weight-S", {{}, -1, 1e15}},
      {"network/TCP-gamma", {{}, -1, 1e15}},
      {"network/loopback-bw", {{}, 0, 1e15}},
      {"network/loopback-lat", {{}, -1, 1e6}},
      {"contexts/stack-size", {{}, 15, 1048576}},
      {"contexts/guard-size", {{}, -1, 1048576}},
  };
  return rules;
}

std::vector<std::string> allowed_keys() {
  std::vector<std::string> keys;
  for (const auto& [key, rule] : option_rules()) keys.push_back(key);
  return keys;
}

void check_number(const std::string& key, const std::string& value, const OptionRule& rule, const std::string& field) {
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(number))
    throw InputError(fmt::format("{}: {}: '{}' is not a finite number", field, key, value));
  const bool fits = (rule.above < 0 ? number >= 0 : number > rule.above) && number <= rule.at_most;
  if (!fits)
    throw InputError(fmt::format("{}: {}: {} is out of range; allowed: {} {} to {}", field, key, value,
                                 rule.above < 0 ? "from" : "above", rule.above < 0 ? 0 : rule.above, rule.at_most));
}

}  // namespace

void check_simgrid_option(const std::string& option, const std::string& field) {
  const auto colon = option.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError(fmt::format("{}: '{}' is not KEY:VALUE (example: --cfg=network/model:LV08)", field, option));
  const std::string key = option.substr(0, colon);
  const std::string value = option.substr(colon + 1);
  // SimGrid's own tracing writes files (simgrid.trace, or any tracing/filename) that no
  // output check protects: one could replace the scenario itself.
  if (key == "tracing" || key.rfind("tracing/", 0) == 0)
    throw InputError(fmt::format("{}: {} is refused: SimGrid's tracing writes files collsim does not check; "
                                 "use --trace (collsim's trace) instead", field, key));
  const auto rule = option_rules().find(key);
  if (rule == option_rules().end())
    throw InputError(fmt::format("{}: '{}' is not an engine option collsim accepts{}; allowed: {}", field, key,
                                 did_you_mean(key, allowed_keys()), join(allowed_keys())));
  const std::vector<std::string>& choices = rule->second.choices;
  if (choices.empty()) return check_number(key, value, rule->second, field);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  if (key == "contexts/nthreads")
    throw InputError(fmt::format("{}: contexts/nthreads:{} is refused: collsim's actors share their run state and "
                                 "must run one at a time (only contexts/nthreads:1)", field, value));
  throw InputError(fmt::format("{}: '{}' is not a valid {}{}; allowed: {}", field, value, key,
                               did_you_mean(value, choices), join(choices)));
}

}  // namespace collsim
