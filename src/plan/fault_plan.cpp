#include "plan/fault_plan.hpp"

#include <algorithm>
#include <unordered_set>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "model/network.hpp"
#include "model/link_sides.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

std::string some_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 6; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 6) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

sg4::Host* find_host(const std::string& name, const std::string& field, const sg4::Engine& engine,
                     const std::vector<sg4::Host*>& all_hosts) {
  sg4::Host* host = engine.host_by_name_or_null(name);
  if (host == nullptr) {
    std::vector<std::string> names;
    for (const auto* h : all_hosts) names.push_back(h->get_name());
    throw InputError(fmt::format("{}: no host '{}' in the platform; hosts are {}", field, name, some_names(names)));
  }
  return host;
}

// A host's NIC: the first link on its way out and the last link on its way in, on its
// route to the farthest host (most links, the first such in platform order). A GPU of
// rail:N:G has two ports, NVLink to its node and a NIC to its rail: the NIC is the one a
// route off the node takes, whichever node the host is on. Where a host has one link
// (star, nodes, fat-tree, dragonfly) every route starts with it.
std::vector<sg4::Link*> nic_links(sg4::Host* host, const std::vector<sg4::Host*>& all_hosts, const std::string& field) {
  sg4::Host* farthest = nullptr;
  std::vector<sg4::Link*> out, route;
  for (sg4::Host* other : all_hosts) {
    if (other == host) continue;
    route.clear();
    double latency = 0;
    host->route_to(other, route, &latency);
    if (farthest == nullptr || route.size() > out.size()) {
      farthest = other;
      out.swap(route);
    }
  }
  if (farthest == nullptr) throw InputError(fmt::format("{}: host '{}' talks to no other host", field, host->get_name()));
  std::vector<sg4::Link*> in;
  double latency = 0;
  farthest->route_to(host, in, &latency);
  std::vector<sg4::Link*> links;
  if (!out.empty()) links.push_back(out.front());
  if (!in.empty() && (links.empty() || in.back() != links.front())) links.push_back(in.back());
  return links;
}

// A fault's targets as found on the platform, before they are named in the plan.
struct Targets {
  FaultSpec spec;
  int index = 0;
  std::string target;
  std::vector<sg4::Link*> links;
  sg4::Host* host = nullptr;
  std::vector<int> ranks;

  PlannedFault planned() const {
    PlannedFault fault{spec, index, target, host != nullptr ? host->get_name() : "", {}, ranks};
    for (const sg4::Link* link : links) fault.links.push_back(link->get_name());
    return fault;
  }
};

}  // namespace

std::vector<PlannedFault> resolve_faults(const Scenario& scenario, const sg4::Engine& engine,
                                         const std::vector<sg4::Host*>& all_hosts,
                                         const std::vector<sg4::Host*>& rank_hosts, const Network& routes) {
  std::vector<PlannedFault> faults;
  std::vector<sg4::Host*> preempted;
  const int p = static_cast<int>(rank_hosts.size());
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultSpec& spec = scenario.faults[i];
    const std::string where = fmt::format("faults.{}", i);
    Targets fault{spec, static_cast<int>(i), "", {}, nullptr, {}};
    if (spec.rank) {
      if (*spec.rank >= p)
        throw InputError(fmt::format("{}.rank: {} is not a rank; allowed: 0 to {}", where, *spec.rank, p - 1));
      fault.host = rank_hosts[static_cast<size_t>(*spec.rank)];
    } else if (!spec.host.empty()) {
      fault.host = find_host(spec.host, where + ".host", engine, all_hosts);
    }
    if (!spec.link.empty()) {
      // A split-duplex link is named for both halves ("host-3_link" = _UP and _DOWN).
      if (sg4::Link* link = engine.link_by_name_or_null(spec.link)) {
        fault.links.push_back(link);
      } else {
        for (const char* half : {"_UP", "_DOWN"})
          if (sg4::Link* part = engine.link_by_name_or_null(spec.link + half)) fault.links.push_back(part);
      }
      if (fault.links.empty()) {
        std::vector<std::string> names;
        for (const auto* link : engine.get_all_links())
          if (link->get_name() != "__loopback__") names.push_back(link->get_name());
        std::sort(names.begin(), names.end());
        throw InputError(fmt::format("{}.link: no link '{}' in the platform; links are {}", where, spec.link,
                                     some_names(names)));
      }
      fault.target = "link " + spec.link;
    } else if (spec.kind == FaultKind::slow_link || spec.kind == FaultKind::link_down) {
      fault.links = nic_links(fault.host, all_hosts, where);
      fault.target = fmt::format("NIC of host {}", fault.host->get_name());
    }
    if (fault.host != nullptr) {
      for (int r = 0; r < p; ++r)
        if (rank_hosts[static_cast<size_t>(r)] == fault.host) fault.ranks.push_back(r);
      if (fault.target.empty()) fault.target = "host " + fault.host->get_name();
      if (!fault.ranks.empty())
        fault.target += fmt::format(" (rank{} {})", fault.ranks.size() > 1 ? "s" : "",
                                    fmt::join(fault.ranks, ", "));
    }
    if (fault.host == nullptr && !fault.links.empty()) {
      std::vector<int> everyone(static_cast<size_t>(p));
      for (int r = 0; r < p; ++r) everyone[static_cast<size_t>(r)] = r;
      fault.ranks = link_owners(routes, everyone, physical_link(fault.links.front()->get_name()));
    }
    if (spec.kind == FaultKind::slow_host && fault.ranks.empty())
      throw InputError(fmt::format("{}: host '{}' runs no worker: slowing it changes nothing", where,
                                   fault.host->get_name()));
    if (spec.kind == FaultKind::preempt) {
      if (std::find(preempted.begin(), preempted.end(), fault.host) != preempted.end())
        throw InputError(fmt::format("{}: host '{}' is preempted by an earlier fault already; a host is preempted "
                                     "once", where, fault.host->get_name()));
      preempted.push_back(fault.host);
    }
    faults.push_back(fault.planned());
  }
  if (!preempted.empty() && std::all_of(rank_hosts.begin(), rank_hosts.end(), [&](sg4::Host* h) {
        return std::find(preempted.begin(), preempted.end(), h) != preempted.end();
      }))
    throw InputError("faults: every worker is preempted: no group would be left to continue");
  return faults;
}

sg4::Host* choose_control_host(const std::vector<PlannedFault>& faults, const std::vector<sg4::Host*>& all_hosts,
                               const std::vector<sg4::Host*>& rank_hosts) {
  auto preempted = [&](const sg4::Host* host) {
    return std::any_of(faults.begin(), faults.end(), [&](const PlannedFault& f) {
      return f.spec.kind == FaultKind::preempt && f.host == host->get_name();
    });
  };
  // (a set of the ranks' hosts: a platform of 131,072 GPUs would take p^2 comparisons)
  const std::unordered_set<const sg4::Host*> ranked(rank_hosts.begin(), rank_hosts.end());
  for (sg4::Host* host : all_hosts)
    if (!preempted(host) && !ranked.contains(host)) return host;
  for (sg4::Host* host : rank_hosts)
    if (!preempted(host)) return host;
  return rank_hosts.front();
}

}  // namespace collsim
