#include "platform/network_model.hpp"

#include <fmt/format.h>

#include "util/named_enum.hpp"

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

}  // namespace collsim
