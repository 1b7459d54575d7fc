// The scenario's "nccl" section (docs/scenario-format.md): what NCCL's environment variables
// force, checked against the collective's algorithm.
#include <algorithm>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "scenario/json_fields.hpp"
#include "scenario/parallel_nccl_spec.hpp"
#include "scenario/scenario.hpp"
#include "util/errors.hpp"

using nlohmann::json;

namespace collsim {

namespace {

// Which algorithms read the section: NCCL's and "nccl" (the tuner's choice).
void check_reader(const CollectiveSpec& collective, const std::string& key) {
  const std::string& name = collective.algorithm;
  if (key == "gpu_cost" || key == "launch") {
    // read by collsim's own algorithms (auto's too); NCCL's always pay NCCL's transport, and
    // parameter servers, processes of their own, no GPU's (plan/nccl_run.hpp)
    std::vector<std::string> readers{"auto"};
    for (const std::string& own : classic_algorithm_names(collective.kind))
      if (!find_algorithm(collective.kind, own, "collective.algorithm").uses.servers) readers.push_back(own);
    const char* what = key == "launch" ? "how often collsim's own algorithms launch a kernel on a GPU"
                                       : "whether collsim's own algorithms pay a GPU's costs on a GPU platform";
    if (std::find(readers.begin(), readers.end(), name) == readers.end())
      throw InputError(fmt::format("nccl.{}: it says {}; NCCL's always pay NCCL's, parameter servers none; allowed "
                                   "with: {}",
                                   key, what, join(readers)));
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

// The section's values, each checked alone (who reads them is checked by the caller).
NcclSpec read_values(const json& object) {
  NcclSpec spec;
  spec.given = true;
  if (object.contains("algo")) spec.algo = nccl::parse_algo(get_string(object["algo"], "nccl.algo"), "nccl.algo");
  if (object.contains("proto")) spec.proto = nccl::parse_proto(get_string(object["proto"], "nccl.proto"), "nccl.proto");
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
  if (object.contains("launch")) {
    const std::string launch = get_string(object["launch"], "nccl.launch");
    if (launch != "collective" && launch != "step")
      throw InputError(fmt::format("nccl.launch: '{}' is not a launch; allowed: collective (one kernel per collective, "
                                   "standing in for NCCL's), step (a kernel per dependent step, on send/recv alone)",
                                   launch));
    spec.launch = launch == "collective" ? nccl::SendRecvLaunch::per_collective : nccl::SendRecvLaunch::per_step;
    if (!spec.gpu_cost)
      throw InputError("nccl.launch: with nccl.gpu_cost false a GPU pays no launch; leave nccl.launch out or "
                       "nccl.gpu_cost true");
  }
  return spec;
}

// NVLS, NVLSTree and CollNet reduce in switches, which NCCL runs with Simple only.
void check_simple_only(const NcclSpec& spec, const std::string& algorithm) {
  const std::optional<nccl::Algo> algo = spec.algo ? spec.algo : nccl::algo_of(algorithm);
  if (spec.proto && algo && nccl::reduces_in_switch(*algo) && *spec.proto != nccl::Proto::simple)
    throw InputError(fmt::format("nccl.proto: NCCL runs {} with Simple only; allowed: Simple", nccl::algo_name(*algo)));
}

// A parallel run's communicators that read the section: those whose algorithm is NCCL's.
struct NcclReader {
  std::string where;
  std::string algorithm;
};

std::vector<NcclReader> nccl_readers(const ParallelismSpec& p) {
  std::vector<NcclReader> readers;
  const auto add = [&](std::string where, const std::string& algorithm) {
    if (algorithm == "nccl" || nccl::algo_of(algorithm)) readers.push_back({std::move(where), algorithm});
  };
  for (size_t i = 0; i < p.collectives.size(); ++i)
    add(fmt::format("parallelism.collectives.{}.algorithm", i), p.collectives[i].algorithm);
  if (p.step.given) {
    add("parallelism.step.algorithms.tensor", p.step.tensor_algorithm);
    add("parallelism.step.algorithms.data", p.step.data_algorithm);
    add("parallelism.step.algorithms.expert", p.step.expert_algorithm);
  }
  return readers;
}

}  // namespace

NcclSpec parse_nccl_spec(const json& object, const CollectiveSpec& collective) {
  check_keys(object, "nccl", {"algo", "proto", "channels", "pxn", "gpu_cost", "launch"});
  for (const auto& [key, value] : object.items()) check_reader(collective, key);
  if (object.contains("proto") && collective.kind == Collective::alltoall)
    throw InputError("nccl.proto: NCCL's alltoall chooses its protocol per block as its send/recv do (LL up to "
                     "NCCL_P2P_LL_THRESHOLD per channel, Simple above), which collsim follows; allowed with an allreduce");
  NcclSpec spec = read_values(object);
  if (spec.algo) check_algo(spec, collective);
  check_simple_only(spec, collective.algorithm);
  return spec;
}

NcclSpec parse_parallel_nccl_spec(const json& object, const ParallelismSpec& parallelism) {
  check_keys(object, "nccl", {"algo", "proto", "channels", "pxn", "gpu_cost", "launch"});
  if (object.contains("pxn"))
    throw InputError("nccl.pxn: a parallel run builds its platform without PXN routes (each GPU sends on its own "
                     "rail's NIC); leave nccl.pxn out");
  if (object.contains("launch"))
    throw InputError("nccl.launch: a parallel run's collectives are a framework's calls of NCCL's collectives, one "
                     "kernel each, whatever algorithm stands in; leave nccl.launch out");
  const std::vector<NcclReader> readers = nccl_readers(parallelism);
  for (const auto& [key, value] : object.items())
    if (key != "gpu_cost" && readers.empty())
      throw InputError(fmt::format("nccl.{}: only NCCL's algorithms read it, and no communicator runs one; name nccl "
                                   "(or one of {}) as a communicator's algorithm ({})",
                                   key, join(nccl_algorithm_names(Collective::allreduce)),
                                   parallelism.step.given ? "parallelism.step.algorithms" : "parallelism.collectives.N.algorithm"));
  NcclSpec spec = read_values(object);
  for (const NcclReader& reader : readers) {
    const auto named = nccl::algo_of(reader.algorithm);
    if (spec.algo && named && *named != *spec.algo)
      throw InputError(fmt::format("nccl.algo: {} contradicts {} '{}' (NCCL's {}); leave one out",
                                   nccl::algo_name(*spec.algo), reader.where, reader.algorithm, nccl::algo_name(*named)));
    check_simple_only(spec, reader.algorithm);
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
  if (spec.launch) out["launch"] = *spec.launch == nccl::SendRecvLaunch::per_collective ? "collective" : "step";
  return out;
}

}  // namespace collsim
