#include "sim/server_shares.hpp"

#include <memory>

#include "training/variable_placement.hpp"

namespace collsim {

int servers_serving(const CollectiveArgs& args, const CommGroup& group) {
  if (!args.deployment.processes) return servers_in_group(args.servers, group.size());
  int serving = 0;
  for (const SwitchPort& port : group.switches())
    if (port.kind == SwitchKind::server) ++serving;
  return serving;
}

int server_peer(const CommGroup& group, int endpoint) {
  const std::vector<SwitchPort>& ports = group.switches();
  for (size_t i = 0; i < ports.size(); ++i)
    if (ports[i].endpoint == endpoint) return static_cast<int>(i);
  return -1;
}

ServerDeployment bucket_deployment(const RunSetup& setup, const CollectiveArgs& args, size_t b) {
  const TrainingPlan& training = setup.plan->training;
  if (training.server_pieces.empty() || args.servers == setup.plan->model.servers)
    return training.deployment_of(args.deployment, b);
  const std::vector<Layer>& layers = setup.scenario->training.layers;
  const std::vector<int> server_of =
      place_variables(layers, setup.scenario->collective.parameter_server.variables, args.servers);
  ServerDeployment out = args.deployment;
  out.pieces = std::make_shared<const ServerPieces>(bucket_pieces(layers, training.buckets[b].bucket, server_of));
  return out;
}

}  // namespace collsim
