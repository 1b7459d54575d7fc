#pragma once
// The two network models (contract): `ideal` makes SimGrid reproduce the alpha-beta model
// exactly; `realistic` keeps SimGrid's default TCP model (LV08).
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

enum class NetworkModel { ideal, realistic };

std::string_view network_model_name(NetworkModel model);
NetworkModel parse_network_model(std::string_view name, std::string_view field);

// SimGrid --cfg settings for the model, applied before the user's own --cfg options.
std::vector<std::string> network_model_config(NetworkModel model);

// Rejects a SimGrid option that is not shaped KEY:VALUE, not on collsim's allow-list
// (engine_options.cpp: tracing, debug and parallel-thread options are not), or with a value
// SimGrid would abort, crash or hang on (unknown model names, non-positive precisions and
// sizes). `field` names where the option came from ("--cfg", "cfg.0", a platform file's line).
void check_simgrid_option(const std::string& option, const std::string& field);

}  // namespace collsim
