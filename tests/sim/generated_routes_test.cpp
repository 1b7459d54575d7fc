// `collsim model` on a generated platform computes its routes from the generator's structure
// (model/generated_network.hpp) instead of reading them from the platform built in SimGrid.
// Checked against SimGrid's own routes, pair by pair (links, names, bandwidths, sharing,
// latency), and the model's figures both ways (every algorithm's time and bottleneck, the
// lower and topology bounds) for every collective on every family it covers.
#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/contention.hpp"
#include "model/generated_network.hpp"
#include "nccl/constants.hpp"
#include "model/route_cache.hpp"
#include "plan/engine_setup.hpp"
#include "plan/planner.hpp"
#include "platform/platform.hpp"
#include "run/nccl_auto.hpp"
#include "sim_harness.hpp"
#include "util/child_process.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
namespace sg4 = simgrid::s4u;

namespace {

RunPlan model_plan(const std::string& topology, int p, Collective kind, bool from_structure) {
  Scenario s = make_scenario(kind, "auto", p, size_t{1} << 22);
  s.topology = topology;
  PlanOptions options;
  options.model_only = true;
  options.routes_from_structure = from_structure;
  SimGridGuard guard;
  return plan_run(s, options, guard);
}

bool close(double a, double b, double tolerance) {
  return a == b || std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b));
}

// The route from a to b on both networks: the first difference, or "".
std::string compare_route(const Network& simgrid, const Network& ours, int a, int b) {
  const NetworkRoute &want = simgrid.route(a, b), &got = ours.route(a, b);
  const std::string pair = fmt::format("{}->{}", a, b);
  if (!close(want.latency, got.latency, 1e-15)) return fmt::format("{} latency {} vs {}", pair, want.latency, got.latency);
  if (want.links.size() != got.links.size()) return fmt::format("{}: {} links vs {}", pair, want.links.size(), got.links.size());
  for (size_t i = 0; i < want.links.size(); ++i) {
    const NetworkLink &w = simgrid.link(want.links[i]), &g = ours.link(got.links[i]);
    if (w.name != g.name || w.bandwidth != g.bandwidth || w.shared != g.shared || w.latency != g.latency ||
        w.switch_link != g.switch_link)
      return fmt::format("{} link {}: {} {} {} {} vs {} {} {} {}", pair, i, w.name, w.bandwidth, w.shared, w.latency,
                         g.name, g.bandwidth, g.shared, g.latency);
  }
  return "";
}

// Every route between the n endpoints both ways: the first difference, or "same".
std::string compare_networks(const Network& simgrid, const Network& ours, int n) {
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b)
        if (std::string difference = compare_route(simgrid, ours, a, b); !difference.empty()) return difference;
  return "same";
}

// Every route between p ranks both ways: the first difference, or "same".
std::string compare_routes(const std::string& topology, int p) {
  const RunPlan plan = model_plan(topology, p, Collective::allreduce, false);
  std::string why_not;
  // on GPUs collsim's algorithms run on NCCL's send/recv, whose transport charges the hops'
  // latencies (nccl.gpu_cost): the links then have none, on both
  const GeneratorSpec spec = *parse_generator(topology, "topology");
  const auto generated = generated_platform(spec, p, why_not, {.zero_latency = gpus_only(spec)});
  if (!generated) return "not generated: " + why_not;
  return compare_networks(routes_of(plan.model), *generated->network, p);
}

// Host h's name and properties as SimGrid's platform has them: the first difference, or "".
std::string compare_host(const GeneratedStructure& structure, int h, const sg4::Host& host) {
  const HostProperties properties = structure.properties(h);
  if (structure.name(h) != host.get_name()) return fmt::format("host {}: {} vs {}", h, host.get_name(), structure.name(h));
  if (properties.size() != host.get_properties()->size()) return "the properties of " + host.get_name();
  for (const auto& [key, value] : properties)
    if (host.get_property(key) == nullptr || value != host.get_property(key)) return host.get_name() + "'s " + key;
  return "";
}

// As NCCL's algorithms see a rail platform (PXN, latencies in the transport): every host's
// name and properties, every route between p ranks, and between each rank and the switches
// of its node and rail, both ways (switches reach no other GPU).
std::string compare_nccl_routes(const std::string& topology, int p) {
  SimGridGuard guard;
  sg4::Engine& engine = create_engine(simgrid_options(make_scenario(Collective::allreduce, "ring", p, 64), {}), guard);
  const PlatformInfo platform = build_platform(engine, topology, "", {.pxn = true, .latency_in_transport = true});
  std::string why_not;
  const auto generated = generated_platform(*parse_generator(topology, "topology"), p, why_not,
                                            {.pxn = true, .zero_latency = true});
  if (!generated) return "not generated: " + why_not;
  const GeneratedStructure& structure = *generated->structure;
  if (structure.switches() != platform.switches.size())
    return fmt::format("{} switches vs {}", platform.switches.size(), structure.switches());
  std::vector<int> switch_hosts;
  std::vector<sg4::Host*> all = platform.hosts;
  all.insert(all.end(), platform.switches.begin(), platform.switches.end());
  for (size_t s = 0; s < platform.switches.size(); ++s) switch_hosts.push_back(static_cast<int>(structure.hosts() + s));
  for (size_t h = 0; h < all.size(); ++h)
    if (std::string difference = compare_host(structure, static_cast<int>(h), *all[h]); !difference.empty()) return difference;
  const auto ours = generated->with_switches(switch_hosts);
  const RouteCache simgrid(std::vector<sg4::Host*>(platform.hosts.begin(), platform.hosts.begin() + p), platform.switches);
  for (int a = 0; a < p; ++a)
    for (size_t s = 0; s < switch_hosts.size(); ++s) {
      const HostProperties sw = structure.properties(switch_hosts[s]);
      const bool own = property_of(sw, "role") == "nvswitch" ? property_of(sw, "node") == structure.node(a)
                                                             : property_of(sw, "rail") == all[static_cast<size_t>(a)]->get_property("rail");
      if (!own) continue;
      const int b = p + static_cast<int>(s);
      for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
        if (std::string difference = compare_route(simgrid, *ours, from, to); !difference.empty()) return difference;
    }
  return compare_networks(simgrid, *ours, p);
}

// What `collsim model --algorithm all` prints, as numbers: every candidate's time, its
// bottleneck and sharing, the lower bound's inputs, the topology bound.
std::string model_figures(const std::string& topology, int p, Collective kind, bool from_structure) {
  const RunPlan plan = model_plan(topology, p, kind, from_structure);
  if (from_structure != plan.model_routes.empty()) return "routes: " + plan.model_routes;
  std::string out = fmt::format("{:.17g} {:.17g} {:.17g} {:.17g} {} | {:.17g} {}\n", plan.model.alpha, plan.model.bandwidth,
                                plan.model.min_alpha, plan.model.injection_bandwidth, plan.locality.source,
                                plan.topology_bound.time, plan.topology_bound.cut);
  for (const AutoCandidate& c : plan.choice.candidates)
    out += fmt::format("{}/{} {:.17g} {} {} {}\n", c.algorithm, c.channels, c.model_time, c.bottleneck, c.sharing, c.skipped);
  return out;
}

// What `collsim model` prints for one of NCCL's algorithms, as numbers: its time, NCCL's
// choice (algorithm, protocol, channels), alpha and B, the notes (the transport's charges).
std::string nccl_figures(const std::string& topology, int p, const std::string& algorithm, nccl::Proto proto,
                         bool from_structure) {
  Scenario s = make_scenario(Collective::allreduce, algorithm, p, size_t{1} << 22);
  s.topology = topology;
  s.nccl.proto = proto;
  PlanOptions options;
  options.model_only = true;
  options.routes_from_structure = from_structure;
  SimGridGuard guard;
  const RunPlan plan = plan_run(s, options, guard);
  if (from_structure != plan.model_routes.empty()) return "routes: " + plan.model_routes;
  const ModelEstimate estimate = estimate_schedule(plan.choice.algorithm->schedule(plan.model), plan.model);
  std::string out = fmt::format("{:.17g} {} {:.17g} {:.17g} {}\n", estimate.time, plan.choice.parameters.dump(),
                                plan.model.alpha, plan.model.bandwidth, plan.switches.size());
  for (const SwitchPlan& sw : plan.switches) out += fmt::format("{} {}\n", sw.host, sw.members.size());
  for (const std::string& note : plan.notes) out += note + "\n";
  return out;
}

// The figures of both paths, line by line, times to 1e-9: the first difference, or "same".
std::string compare_figures(const std::string& want, const std::string& got) {
  std::istringstream w(want), g(got);
  std::string wl, gl;
  while (std::getline(w, wl)) {
    if (!std::getline(g, gl)) return "fewer lines: " + wl;
    std::istringstream wt(wl), gt(gl);
    std::string a, b;
    while (wt >> a) {
      if (!(gt >> b)) return wl + " | " + gl;
      char* end_a = nullptr;
      char* end_b = nullptr;
      const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
      const bool numbers = *end_a == '\0' && *end_b == '\0' && !a.empty() && !b.empty();
      if (numbers ? !close(x, y, 1e-9) : a != b) return wl + " | " + gl;
    }
  }
  return std::getline(g, gl) ? "more lines: " + gl : "same";
}

std::string in_child(const std::function<std::string()>& work) {
  const ChildOutcome outcome = run_in_child(work);
  return outcome.exit_code == 0 ? outcome.output : fmt::format("exit {}: {}", outcome.exit_code, outcome.output);
}

const std::vector<std::pair<std::string, int>> platforms{
    {"star:16", 16},          {"star:16", 13},         {"rack:16:3:1.25GBps", 16},     {"nodes:4:8", 32},
    {"nodes:4:8", 20},        {"leaf-spine:4:4:10GBps:1us:2", 16}, {"rail:4:8", 32},  {"rail:4:8", 27},
    {"dgx-h100:2", 16},       {"dgx-a100:3:2", 24},    {"gb200-nvl72:1", 72},          {"fat-tree:2:4,4:1,2:1,2", 16},
    {"fat-tree:2:4,4:2,2:2,1", 16}, {"fat-tree:3:2,2,2:1,2,2:1,1,2", 8}, {"fat-tree:2:8,4:1,4:1,1", 30},
    {"fat-tree:2:4,2:2,2:2,2", 8}, {"fat-tree:3:2,2,2:2,2,1:2,1,2", 8}};

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("routes from the generator's structure are SimGrid's, route by route, on every family they cover") {
    for (const auto& [topology, p] : platforms) {
      CAPTURE(topology);
      CAPTURE(p);
      CHECK(in_child([&] { return compare_routes(topology, p); }) == "same");
    }
  }

  TEST_CASE("the model on the generator's structure prices every algorithm as on SimGrid's platform, to 1e-9") {
    const Collective kinds[] = {Collective::allreduce, Collective::broadcast, Collective::reduce,
                                Collective::reduce_scatter, Collective::allgather, Collective::alltoall};
    for (const auto& [topology, p] : platforms)
      for (Collective kind : kinds) {
        CAPTURE(topology);
        CAPTURE(p);
        CAPTURE(collective_name(kind));
        const std::string simgrid = in_child([&] { return model_figures(topology, p, kind, false); });
        const std::string ours = in_child([&] { return model_figures(topology, p, kind, true); });
        CHECK(simgrid.find('/') != std::string::npos);
        CHECK(compare_figures(simgrid, ours) == "same");
      }
  }

  TEST_CASE("NCCL's view of a rail platform from the generator's structure is SimGrid's: PXN, switches, properties") {
    const std::vector<std::pair<std::string, int>> rails{
        {"rail:4:8", 32}, {"rail:3:4", 10}, {"dgx-h100:2", 16}, {"dgx-a100:3:2", 24}, {"gb200-nvl72:1", 72},
        {"rail:3:4:h100:ndr-sharp", 12}, {"dgx-h100:2:1:ndr-sharp", 16}};
    for (const auto& [topology, p] : rails) {
      CAPTURE(topology);
      CAPTURE(p);
      CHECK(in_child([&] { return compare_nccl_routes(topology, p); }) == "same");
    }
  }

  TEST_CASE("NCCL's algorithms on the generator's structure are priced as on SimGrid's platform, to 1e-9") {
    const std::vector<std::pair<std::string, int>> rails{
        {"dgx-h100:2", 16}, {"dgx-h100:3", 20}, {"dgx-a100:3:2", 24}, {"rail:4:4", 16}, {"gb200-nvl72:1", 72},
        {"dgx-h100:3:1:ndr-sharp", 24}};
    for (const auto& [topology, p] : rails)
      for (const std::string algorithm : {"nccl", "nccl-ring", "nccl-tree", "nccl-nvls", "nccl-nvls-tree",
                                          "nccl-collnet-direct", "nccl-collnet-chain"})
        for (const nccl::Proto proto : nccl::all_protos()) {
          CAPTURE(topology);
          CAPTURE(algorithm);
          CAPTURE(nccl::proto_name(proto));
          const std::string simgrid = in_child([&] { return nccl_figures(topology, p, algorithm, proto, false); });
          const std::string ours = in_child([&] { return nccl_figures(topology, p, algorithm, proto, true); });
          CHECK(compare_figures(simgrid, ours) == "same");
        }
  }

  TEST_CASE("NCCL's variants priced in one process on one shared platform equal each alone on SimGrid's, to 1e-9") {
    // `collsim model --algorithm all` prices them all on one generated platform, every route
    // computed once for all (run/nccl_auto.cpp); each alone, in a child with SimGrid's own
    // platform, is the reference (a variant NCCL cannot run here is refused both ways)
    const std::vector<std::pair<std::string, int>> rails{
        {"dgx-h100:2", 16}, {"dgx-a100:3:2", 24}, {"rail:4:4", 12}, {"gb200-nvl72:1", 72}, {"dgx-h100:3:1:ndr-sharp", 24}};
    for (const auto& [topology, p] : rails) {
      CAPTURE(topology);
      Scenario s = make_scenario(Collective::allreduce, "auto", p, size_t{1} << 22);
      s.topology = topology;
      const std::string shared = in_child([&] {
        std::string out;
        for (const NcclVariant& v : price_nccl_variants(s, true))
          out += fmt::format("{}/{} {}\n", nccl::registry_name(v.algo), nccl::proto_name(v.proto),
                             v.why_not.empty() ? fmt::format("{:.17g} {}", v.time, v.channels) : "refused");
        return out;
      });
      size_t priced = 0, lines = 0;
      std::istringstream rows(shared);
      for (std::string name, time, channels; rows >> name >> time;) {
        ++lines;
        const std::string algorithm = name.substr(0, name.find('/')), proto_name = name.substr(name.find('/') + 1);
        nccl::Proto proto = nccl::Proto::simple;
        for (const nccl::Proto each : nccl::all_protos())
          if (nccl::proto_name(each) == proto_name) proto = each;
        const std::string alone = in_child([&] {
          std::istringstream figures(nccl_figures(topology, p, algorithm, proto, false));
          std::string seconds, parameters;
          figures >> seconds >> parameters;  // (the parameters' JSON has no space)
          return fmt::format("{} {}", seconds, nlohmann::json::parse(parameters)["nccl"]["channels"].get<int>());
        });
        CAPTURE(name);
        if (time == "refused") {
          CHECK(alone.starts_with("exit 2"));
          continue;
        }
        rows >> channels;
        ++priced;
        CHECK(compare_figures(alone, time + " " + channels) == "same");
      }
      CHECK(lines == 10);  // Ring and Tree with 3 protocols, the 4 that reduce in switches with Simple
      CHECK(priced >= 3);
    }
  }

  TEST_CASE("torus and dragonfly routes stay SimGrid's, and the plan says why") {
    for (const std::string topology : {"torus:4x4", "dragonfly:2:2:2"}) {
      const std::string out = in_child([&] {
        const RunPlan plan = model_plan(topology, 8, Collective::allreduce, true);
        return plan.model_routes;
      });
      CHECK(out.find(topology.substr(0, topology.find(':'))) != std::string::npos);
    }
  }
}
