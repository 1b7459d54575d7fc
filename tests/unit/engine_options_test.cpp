#include <doctest/doctest.h>

#include "plan/engine_setup.hpp"
#include "scenario/scenario.hpp"

using namespace collsim;
using nlohmann::json;

namespace {
// The value SimGrid ends up with for `key`: the last option setting it (SimGrid applies them
// in order), empty if none does.
std::string effective(const SimGridOptions& options, const std::string& key) {
  std::string value;
  for (const auto& [option, field] : options)
    if (option.rfind(key + ":", 0) == 0) value = option.substr(key.size() + 1);
  return value;
}

SimGridOptions options_for(const std::string& scenario_json, const std::vector<std::string>& cfg = {}) {
  return simgrid_options(parse_scenario(json::parse(scenario_json), ""), cfg);
}

// SimGrid 3.32's selective update errs only when a transfer's latency ends (engine_setup.cpp):
// the exact solver wherever a transfer can have a latency, the lazy update where none can.
void check_exact_solver(const SimGridOptions& options) {
  CHECK(effective(options, "network/optim") == "Full");
  CHECK(effective(options, "network/maxmin-selective-update") == "no");
}
}  // namespace

TEST_CASE("the lazy update only where no transfer can have a latency") {
  // NCCL's runs and GPU transports on a GPU platform carry the hops' latency themselves
  CHECK(effective(options_for(R"({"topology": "dgx-h100:2", "collective": {"algorithm": "nccl"}})"), "network/optim") ==
        "Lazy");
  CHECK(effective(options_for(R"({"topology": "rail:2:4", "collective": {"algorithm": "ring"}})"), "network/optim") ==
        "Lazy");
  CHECK(effective(options_for(R"({"topology": "dgx-h100:2", "collective": {"algorithm": "nccl"}})"),
                  "network/maxmin-selective-update")
            .empty());
  // links with latencies: CPU clusters, GPU hosts without collsim's GPU transport, files
  check_exact_solver(options_for(R"({"topology": "star:8"})"));
  check_exact_solver(options_for(R"({"topology": "nodes:2:4", "collective": {"algorithm": "ring"}})"));
  check_exact_solver(options_for(R"({"topology": "dgx-h100:2", "nccl": {"gpu_cost": false}})"));
  check_exact_solver(options_for(R"({"topology": "topologies/star-8.xml"})"));
  // a fault that gives a link a latency mid-run
  check_exact_solver(options_for(R"({"topology": "dgx-h100:2", "collective": {"algorithm": "nccl"},
      "training": {"rounds": 2},
      "faults": [{"kind": "slow-link", "host": "node-0-gpu-1", "at_round": 1, "factor": 0.5, "latency": "5us"}]})"));
}

TEST_CASE("a solver the user names wins over collsim's choice") {
  const std::string nccl = R"({"topology": "dgx-h100:2", "collective": {"algorithm": "nccl"}})";
  check_exact_solver(options_for(nccl, {"network/optim:Full"}));
  check_exact_solver(options_for(nccl, {"network/maxmin-selective-update:no"}));
  CHECK(effective(options_for(R"({"topology": "star:8"})", {"network/optim:Lazy"}), "network/optim") == "Lazy");
  CHECK(effective(options_for(R"({"topology": "star:8"})", {"network/optim:Lazy"}), "network/maxmin-selective-update")
            .empty());
  CHECK(effective(options_for(R"({"topology": "star:8", "cfg": ["network/optim:Lazy"]})"), "network/optim") == "Lazy");
}
