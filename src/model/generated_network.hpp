#pragma once
// A generated platform's routes computed from its generator's structure
// (platform/generator_spec.hpp), without building it in SimGrid: what `collsim model` prices
// on at any scale. Each route is the one SimGrid gives on the platform that
// platform/generators.cpp builds (the same links, names, bandwidths, sharing and latency,
// added up in SimGrid's order): `sim:routes from the generator's structure ...` compares
// them route by route. Links are numbered as RouteCache numbers them, in the order routes
// first cross them, so the model sees the same network either way.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/network.hpp"
#include "model/platform_host.hpp"
#include "model/rank_places.hpp"
#include "platform/generator_spec.hpp"

namespace collsim {

// One family's structure: its links by a dense index of its own, the route between two
// hosts (host indices in platform order) as such indices, and the hosts' places.
class GeneratedStructure {
public:
  virtual ~GeneratedStructure() = default;
  // The links of the route from host `from` to host `to` (from != to) into `links`, and its
  // latency added up as SimGrid adds it. The switches' hosts (below) follow the ranks' hosts.
  virtual void route(int from, int to, std::vector<int>& links, double& latency) const = 0;
  // Link `index` as built.
  virtual NetworkLink link(int index) const = 0;
  virtual size_t hosts() const = 0;  // the hosts ranks may run on (no switch)
  virtual size_t links() const = 0;  // indices 0 to links() - 1
  // The englobing zone's name and the property `node` (empty: none) of host `host`.
  virtual std::string zone(int host) const = 0;
  virtual std::string node(int /*host*/) const { return ""; }
  // The switches that reduce in the network (hosts of their own, with a property `role`):
  // host indices hosts() to hosts() + switches() - 1, in the order the generator makes them.
  virtual size_t switches() const { return 0; }
  // Host `host`'s name and properties as the generator sets them, switches included (only
  // the rail family's hosts have properties, and only its switches' names are read: the
  // other families say nothing).
  virtual std::string name(int /*host*/) const { return ""; }
  virtual HostProperties properties(int /*host*/) const { return {}; }
};

class GeneratedNetwork : public Network {
public:
  // Endpoints: the ranks on hosts 0 .. ranks - 1, then the hosts `extra` (switches) in order;
  // `zero_latency`: every link without its latency (NCCL's transport charges its own hops).
  explicit GeneratedNetwork(std::shared_ptr<const GeneratedStructure> structure, bool zero_latency = false,
                            int ranks = 0, std::vector<int> extra = {})
      : structure_(std::move(structure)), zero_latency_(zero_latency), ranks_(ranks), extra_(std::move(extra)),
        ids_(structure_->links(), -1) {}
  const NetworkRoute& route(int from, int to) const override;
  void read_links(int from, int to, std::vector<int>& links) const override;
  double append_route(int from, int to, std::vector<int>& links) const override;
  const NetworkLink& link(int id) const override { return links_[static_cast<size_t>(id)]; }
  size_t link_count() const override { return links_.size(); }

private:
  int id_of(int index) const;
  int host_of(int endpoint) const {
    return extra_.empty() || endpoint < ranks_ ? endpoint : extra_[static_cast<size_t>(endpoint - ranks_)];
  }
  void read(int from, int to, double& latency) const;  // the structure's link indices into buffer_

  std::shared_ptr<const GeneratedStructure> structure_;
  bool zero_latency_;
  int ranks_;
  std::vector<int> extra_;
  mutable std::unordered_map<uint64_t, NetworkRoute> routes_;
  mutable std::vector<int> ids_;  // by the structure's link index: its model link id (-1: not met yet)
  mutable std::vector<NetworkLink> links_;
  mutable std::vector<int> buffer_;
};

struct GeneratedPlatform {
  std::shared_ptr<const Network> network;  // endpoints: the ranks, on the first hosts in platform order
  RankPlaces places;
  size_t hosts = 0;                         // on the whole platform
  std::shared_ptr<const GeneratedStructure> structure;
  bool zero_latency = false;
  // The ranks' routes with the switches `switch_hosts` (host indices) as endpoints after the ranks'.
  std::shared_ptr<const Network> with_switches(std::vector<int> switch_hosts) const;
};

// How the platform is built for the run (platform/platform.hpp, PlatformOptions): NCCL's
// algorithms route with PXN and charge the links' latencies in their transport instead.
struct StructureOptions {
  bool pxn = false;
  bool zero_latency = false;
};

// The platform of `spec` with `workers` ranks on its first hosts; nullopt with `why_not`
// set for a family whose routes are read from SimGrid's own platform only.
std::optional<GeneratedPlatform> generated_platform(const GeneratorSpec& spec, int workers, std::string& why_not,
                                                    StructureOptions options = {});

}  // namespace collsim
