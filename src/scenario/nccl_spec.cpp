// The scenario's "nccl" section (docs/scenario-format.md): what NCCL's environment variables
// force, checked against the collective's algorithm.
#include <algorithm>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "scenario/json_fields.hpp"
#include "scenario/scenario.hpp"
#include "util/errors.hpp"

using nlohmann::json;

namespace collsim {

namespace {

// Which algorithms read the section: NCCL's and "nccl" (the tuner's choice).
void check_reader(const CollectiveSpec& collective, const std::string& key) {
  const std::string& name = collective.algorithm;
  if (key == "gpu_cost") {
    // read by collsim's own algorithms (auto's too); NCCL's always pay NCCL's transport, and
    // parameter servers, processes of their own, no GPU's (plan/nccl_run.hpp)
    std::vector<std::string> readers{"auto"};
    for (const std::string& own : classic_algorithm_names(collective.kind))
      if (!find_algorithm(collective.kind, own, "collective.algorithm").uses.servers) readers.push_back(own);
    if (std::find(readers.begin(), readers.end(), name) == readers.end())
      throw InputError(fmt::format("nccl.gpu_cost: it says whether collsim's own algorithms pay a GPU's costs on a GPU "
                                   "platform; NCCL's always pay NCCL's, parameter servers none; allowed with: {}",
                                   join(readers)));
    return;
  }
  if (name == "nccl") return;
  if (name == "auto" || !find_algorithm(collective.kind, name, "collective.algorithm").uses.nccl)
    throw InputError(fmt::format("nccl.{}: only NCCL's algorithms read it, and collective.algorithm '{}' is none of "
                                 "them; allowed with: nccl, {}",
                                 key, name, join(nccl_algorithm_names(collective.kind))));
}

// A forced algorithm must be the one collective.algorithm names, and run the protocol forced.
void check_algo(const NcclSpec& spec, const CollectiveSpec& collective) {
  if (collective.kind != Collective::allreduce)
    throw InputError(fmt::format("nccl.algo: NCCL runs {} point to point, without an algorithm to choose; allowed "
                                 "with an allreduce", collective_name(collective.kind)));
  const auto named = nccl::algo_of(collective.algorithm);
  if (named && *named != *spec.algo)
    throw InputError(fmt::format("nccl.algo: {} contradicts collective.algorithm '{}' (NCCL's {}); leave one out",
                                 nccl::algo_name(*spec.algo), collective.algorithm, nccl::algo_name(*named)));
}

}  // namespace

NcclSpec parse_nccl_spec(const json& object, const CollectiveSpec& collective) {
  check_keys(object, "nccl", {"algo", "proto", "channels", "pxn", "gpu_cost"});
  NcclSpec spec;
  spec.given = true;
  for (const auto& [key, value] : object.items()) check_reader(collective, key);
  if (object.contains("algo")) {
    spec.algo = nccl::parse_algo(get_string(object["algo"], "nccl.algo"), "nccl.algo");
    check_algo(spec, collective);
  }
  if (object.contains("proto") && collective.kind == Collective::alltoall)
    throw InputError("nccl.proto: NCCL's alltoall chooses its protocol per block as its send/recv do (LL up to "
                     "NCCL_P2P_LL_THRESHOLD per channel, Simple above), which collsim follows; allowed with an allreduce");
  if (object.contains("proto")) spec.proto = nccl::parse_proto(get_string(object["proto"], "nccl.proto"), "nccl.proto");
  const std::optional<nccl::Algo> algo = spec.algo ? spec.algo : nccl::algo_of(collective.algorithm);
  const bool simple_only = algo && nccl::reduces_in_switch(*algo);
  if (spec.proto && simple_only && *spec.proto != nccl::Proto::simple)
    throw InputError(fmt::format("nccl.proto: NCCL runs {} with Simple only; allowed: Simple", nccl::algo_name(*algo)));
  if (object.contains("channels"))
    spec.channels = static_cast<int>(get_integer(object["channels"], "nccl.channels", 1, max_nccl_channels));
  if (object.contains("pxn")) {
    if (!object["pxn"].is_boolean())
      throw InputError(fmt::format("nccl.pxn: must be true or false, got {}", object["pxn"].dump()));
    spec.pxn = object["pxn"].get<bool>();
  }
  if (object.contains("gpu_cost")) {
    if (!object["gpu_cost"].is_boolean())
      throw InputError(fmt::format("nccl.gpu_cost: must be true or false, got {}", object["gpu_cost"].dump()));
    spec.gpu_cost = object["gpu_cost"].get<bool>();
  }
  return spec;
}

json nccl_spec_to_json(const NcclSpec& spec) {
  json out = json::object();
  if (spec.algo) out["algo"] = nccl::algo_name(*spec.algo);
  if (spec.proto) out["proto"] = nccl::proto_name(*spec.proto);
  if (spec.channels) out["channels"] = *spec.channels;
  out["pxn"] = spec.pxn;
  if (!spec.gpu_cost) out["gpu_cost"] = false;  // absent: true
  return out;
}

}  // namespace collsim
