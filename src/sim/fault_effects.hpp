#pragma once
// Whether a fault touched anything, for recovery_quality's culprits: a slow-link fault on
// a link that no message crossed while it was slow (a GPU's unused NIC, one of a torus
// host's six links), a link-down on a link no transfer used while it was down, or a
// slow-host fault on a host that computed nothing while slowed,
// struck a rank without slowing anyone, and a rank kept then is no culprit kept.
#include <vector>

#include "sim/link_usage.hpp"
#include "sim/run_record.hpp"

namespace simgrid::s4u {
class Link;
}

namespace collsim {

struct ResolvedFault;

// The links of the slow-link and link-down faults: the link usage recorder keeps when
// transfers were on them, delivered or abandoned (LinkUsageRecorder::watch).
std::vector<const simgrid::s4u::Link*> faulty_links(const std::vector<ResolvedFault>& faults);

// Sets `touched` on every applied fault: a slow-link one when a message was on one of its
// links between the fault and its undoing (or `end`); a link-down one when a transfer was
// on one of its links when it went down or tried to cross it while down (a broken transfer
// is abandoned, and its span ends when it broke), or when it cut off members of whom one was
// `dropped`; a slow-host one when a struck rank computed while slowed (`slowed_work`, by
// world rank). Preemptions keep true.
void note_fault_effects(std::vector<FaultEvent>& faults, const LinkUsage& usage, const std::vector<char>& slowed_work,
                        const std::vector<int>& dropped, double end);

}  // namespace collsim
