#include "sim/fault_effects.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "sim/faults.hpp"

namespace collsim {
namespace {

// When `applied` was undone: the fault's next "undone" event, else the end of the run.
double undone_at(const std::vector<FaultEvent>& faults, const FaultEvent& applied, double end) {
  for (const FaultEvent& event : faults)
    if (event.fault == applied.fault && event.action == "undone" && event.time >= applied.time) return event.time;
  return end;
}

// Whether a transfer was on `link` between `from` and `to`; `ending_at_from` counts one
// that ended at `from` (a transfer a link-down broke ends when the link went down).
bool crossed_between(const LinkUsageRecord& link, double from, double to, bool ending_at_from = false) {
  return std::any_of(link.spans.begin(), link.spans.end(), [&](const auto& span) {
    return span.first < to && (span.second > from || (ending_at_from && span.second == from));
  });
}

}  // namespace

std::vector<const simgrid::s4u::Link*> faulty_links(const std::vector<ResolvedFault>& faults) {
  std::vector<const simgrid::s4u::Link*> links;
  for (const ResolvedFault& fault : faults)
    if (fault.spec.kind == FaultKind::slow_link || fault.spec.kind == FaultKind::link_down)
      links.insert(links.end(), fault.links.begin(), fault.links.end());
  return links;
}

void note_fault_effects(std::vector<FaultEvent>& faults, const LinkUsage& usage, const std::vector<char>& slowed_work,
                        const std::vector<int>& dropped, double end) {
  std::unordered_map<std::string, const LinkUsageRecord*> by_name;
  for (const LinkUsageRecord& link : usage.links) by_name.emplace(link.name, &link);
  for (FaultEvent& fault : faults) {
    if (fault.action != "applied") continue;
    if (fault.kind == "slow-link" || fault.kind == "link-down") {
      const double until = undone_at(faults, fault, end);
      const bool down = fault.kind == "link-down";
      // A link-down that cut members off from the coordinator mattered when one of them was
      // dropped, transfers or not. One that no transfer crossed and no verdict needed did
      // not (a torus link whose half the ring never takes, on the way to rank 100 at
      // p = 256: the run as fast as without it, and rank 100 was a "culprit kept").
      const bool cut_off_dropped = std::any_of(fault.cut_off.begin(), fault.cut_off.end(), [&](int rank) {
        return std::find(dropped.begin(), dropped.end(), rank) != dropped.end();
      });
      fault.touched = (down && cut_off_dropped) ||
                      std::any_of(fault.links.begin(), fault.links.end(), [&](const std::string& name) {
                        const auto link = by_name.find(name);
                        return link != by_name.end() && crossed_between(*link->second, fault.time, until, down);
                      });
    } else if (fault.kind == "slow-host") {
      fault.touched = std::any_of(fault.ranks.begin(), fault.ranks.end(), [&](int rank) {
        return static_cast<size_t>(rank) < slowed_work.size() && slowed_work[static_cast<size_t>(rank)] != 0;
      });
    }
  }
}

}  // namespace collsim
