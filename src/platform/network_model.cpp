#include "platform/network_model.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {

std::string_view network_model_name(NetworkModel model) {
  return model == NetworkModel::ideal ? "ideal" : "realistic";
}

NetworkModel parse_network_model(std::string_view name, std::string_view field) {
  if (name == "ideal") return NetworkModel::ideal;
  if (name == "realistic") return NetworkModel::realistic;
  throw InputError(fmt::format("{}: unknown network model '{}'{}; allowed: ideal, realistic", field, name,
                               did_you_mean(name, {"ideal", "realistic"})));
}

std::vector<std::string> network_model_config(NetworkModel model) {
  if (model == NetworkModel::realistic) return {};
  // CM02 has no latency or bandwidth correction factors; without cross-traffic and with
  // no TCP window cap, a message costs exactly latency + size / bandwidth.
  return {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0"};
}

void check_simgrid_option(const std::string& option) {
  const auto colon = option.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError(fmt::format("--cfg: '{}' is not KEY:VALUE (example: --cfg=network/model:LV08)", option));
  // SimGrid aborts (instead of throwing) on an unknown model name: check those here.
  static const std::map<std::string, std::vector<std::string>> models{
      {"network/model", {"LV08", "CM02", "Constant", "SMPI", "IB"}},
      {"cpu/model", {"Cas01"}},
      {"host/model", {"default", "compound", "ptask_L07"}},
      {"contexts/factory", {"raw", "thread", "ucontext", "boost"}},
  };
  const std::string key = option.substr(0, colon);
  const std::string value = option.substr(colon + 1);
  if (auto it = models.find(key); it != models.end()) {
    if (std::find(it->second.begin(), it->second.end(), value) == it->second.end())
      throw InputError(fmt::format("--cfg: '{}' is not a valid {}{}; allowed: {}", value, key,
                                   did_you_mean(value, it->second), join(it->second)));
  }
}

}  // namespace collsim
