#include "platform/network_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <map>

#include "util/errors.hpp"
#include "util/named_enum.hpp"
#include "util/suggest.hpp"

namespace collsim {

namespace {
const NamedEnum<NetworkModel>& network_models() {
  static const NamedEnum<NetworkModel> table{"network model",
                                             {{NetworkModel::ideal, "ideal"}, {NetworkModel::realistic, "realistic"}}};
  return table;
}
}  // namespace

std::string_view network_model_name(NetworkModel model) { return network_models().name(model); }
NetworkModel parse_network_model(std::string_view name, std::string_view field) {
  return network_models().parse(name, field);
}

std::vector<std::string> network_model_config(NetworkModel model) {
  if (model == NetworkModel::realistic) return {};
  // CM02 has no latency or bandwidth correction factors; without cross-traffic and with
  // no TCP window cap, a message costs exactly latency + size / bandwidth.
  return {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0"};
}

void check_simgrid_option(const std::string& option, const std::string& field) {
  const auto colon = option.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError(fmt::format("{}: '{}' is not KEY:VALUE (example: --cfg=network/model:LV08)", field, option));
  const std::string key = option.substr(0, colon);
  const std::string value = option.substr(colon + 1);

  // Values SimGrid 3.32 aborts on instead of throwing.
  static const std::map<std::string, std::vector<std::string>> choices{
      {"network/model", {"LV08", "CM02", "SMPI", "IB"}},
      {"network/optim", {"Lazy", "Full", "TI"}},
      {"cpu/optim", {"Lazy", "Full", "TI"}},
      {"cpu/model", {"Cas01"}},
      {"host/model", {"default", "compound"}},
      {"contexts/factory", {"raw", "thread", "ucontext", "boost"}},
      {"contexts/synchro", {"futex", "posix", "busy_wait"}},
      {"plugin", {"host_energy", "link_energy", "link_load", "host_load", "host_dvfs"}},
  };
  if (auto it = choices.find(key); it != choices.end()) {
    if (std::find(it->second.begin(), it->second.end(), value) == it->second.end())
      throw InputError(fmt::format("{}: '{}' is not a valid {}{}; allowed: {}", field, value, key,
                                   did_you_mean(value, it->second), join(it->second)));
    return;
  }
  // SimGrid's own tracing writes files (simgrid.trace, or any tracing/filename) that no
  // output check protects: one could replace the scenario itself.
  if (key == "tracing" || key.rfind("tracing/", 0) == 0)
    throw InputError(fmt::format("{}: {} is refused: SimGrid's tracing writes files collsim does not check; "
                                 "use --trace (collsim's trace) instead", field, key));
  // Parallel contexts run actors of one scheduling round in threads at once: collsim's
  // shared run state (the message log, counters) is not made for that.
  if (key == "contexts/nthreads" && value != "1")
    throw InputError(fmt::format("{}: contexts/nthreads:{} is refused: collsim's actors share their run state and "
                                 "must run one at a time (only contexts/nthreads:1)", field, value));
  // Numbers SimGrid crashes or hangs on when they are zero or negative.
  static const std::map<std::string, double> minimum{
      {"surf/precision", 0},         {"maxmin/precision", 0},        {"network/bandwidth-factor", 0},
      {"network/latency-factor", 0}, {"network/loopback-bw", 0},     {"contexts/stack-size", 15},
      {"network/TCP-gamma", -1e-300}, {"network/weight-S", -1e-300}, {"contexts/guard-size", -1e-300},
      {"network/loopback-lat", -1e-300}};
  if (auto it = minimum.find(key); it != minimum.end()) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0')
      throw InputError(fmt::format("{}: {}: '{}' is not a number", field, key, value));
    if (!(number > it->second))
      throw InputError(fmt::format("{}: {}: {} is out of range; must be {} {}", field, key, value,
                                   it->second < 0 ? ">=" : ">", it->second < 0 ? 0 : it->second));
  }
}

}  // namespace collsim
