"""Regrouping around a switch link where ring order is not the algorithm (issue #48 item 1,
docs/recovery.md rule 4f): a tree re-rooted, a hierarchical allreduce's groups put in another
order on its ring across the groups, and where no arrangement keeps off the link, everyone
kept with an entry that says so.

The platform: racks of 4 hosts, every host on a 10 GBps, 1 us link of its own, every two
racks joined by a link of their own (100 GBps, no latency: ten times a host's, so that no
route between racks is slower than one inside a rack and one rack's four transfers across
it share it without slowing). With the link between racks 0 and 1 at 1% (1 GB/s) the
transfers across it run 10x slower; every other route is host link up, host link down:
alpha = 2 us and B = 10 GB/s everywhere. A regroup that keeps off the link then runs each
round at the algorithm's closed form (docs/algorithms.md), computed here by hand:

  naive-binomial:  2 ceil(log2 p)(alpha + n/B)
  hierarchical:    2(g-1)(alpha + n/(gB)) + 2(G-1)(alpha + n/(gGB))   (G groups of g)
  ring:            2(p-1)(alpha + n/(pB))

each plus the round's 1 ms of computation. Before: the hierarchical allreduce's pairs were
read as a ring plus the root with everyone, which no order keeps off a link between racks
(everyone kept, 32.8 ms rounds as under policy none); the trees and the ring priced the
link at 1/s of its own bandwidth, still faster than the hosts', so keeping looked free and
nobody regrouped.
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, route_lines

MIB = 1 << 20
ALPHA, B, COMPUTE = 2e-6, 10e9, 1e-3


def racks(folder, count, hosts=4):
    """`count` racks of `hosts` (host property node = the rack: the hierarchical allreduce's
    groups), every two racks joined by a link of their own, marked a switch link."""
    p = count * hosts
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '  <zone id="racks" routing="Full">']
    lines += [f'    <host id="host-{i}" speed="1Gf"><prop id="node" value="rack-{i // hosts}"/></host>' for i in range(p)]
    lines += [f'    <link id="host-{i}_link" bandwidth="10GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>'
              for i in range(p)]
    lines += [f'    <link id="rack-{a}-{b}" bandwidth="100GBps" latency="0us" sharing_policy="SPLITDUPLEX">'
              '<prop id="switch_link" value="yes"/></link>' for a in range(count) for b in range(a + 1, count)]
    def between_racks(a, b):
        ra, rb = a // hosts, b // hosts
        return [] if ra == rb else \
            [f'<link_ctn id="rack-{min(ra, rb)}-{max(ra, rb)}" direction="{"UP" if ra < rb else "DOWN"}"/>']
    lines += route_lines(p, between_racks)
    lines += ["  </zone>", "</platform>"]
    path = Path(folder) / "racks.xml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(count, algorithm, size=16 * MIB, rounds=4):
    """`algorithm` on `count` racks of 4, the link between racks 0 and 1 at 1% from round 1."""
    with tempfile.TemporaryDirectory() as folder:
        document = {"topology": str(racks(folder, count)), "workers": 4 * count,
                    "collective": {"algorithm": algorithm, "size": f"{size // MIB}MiB"},
                    "training": {"rounds": rounds, "compute": "1ms", "model": "linear-regression"},
                    "faults": [{"kind": "slow-link", "link": "rack-0-1", "at_round": 1, "factor": 0.01}],
                    "recovery": {"policy": "rebuild"}, "seed": 42}
        path, out = Path(folder) / "s.json", Path(folder) / "t.json"
        path.write_text(json.dumps(document))
        subprocess.run([COLLSIM, "run", str(path), "--quiet", "--trace", str(out)], check=True, timeout=300)
        return json.loads(out.read_text())


class RegroupBeyondTheRing(unittest.TestCase):
    N = 16 * MIB

    def assert_nobody_dropped(self, trace, p):
        quality = trace["summary"]["recovery_quality"]
        self.assertEqual((quality["dropped"], quality["healthy_dropped"]), ([], []))
        self.assertEqual(sorted(trace["summary"]["final_group"]), list(range(p)))
        self.assertTrue(trace["summary"]["verified"])
        self.assertEqual(len(trace["rounds"]), 4)

    def regrouped(self, trace, p, healthy):
        """One regroup, named the fabric's, nobody dropped; every round after it at `healthy`."""
        self.assert_nobody_dropped(trace, p)
        regroups = [e for e in trace["recovery"] if e["epoch_after"] > e["epoch_before"]]
        self.assertEqual(len(regroups), 1, [e["reason"] for e in trace["recovery"]])
        entry = regroups[0]
        self.assertIn("rack-0-1, which no rank owns (a switch link)", entry["reason"])
        self.assertIn("regroup", entry["reason"])
        self.assertEqual(entry["dropped_ranks"], [])
        self.assertEqual(entry["prices"]["chosen"], "regroup")
        after = [r for r in trace["rounds"] if r["round"] > entry["round"]]
        self.assertEqual(len(after), 2)
        for row in after:
            self.assertAlmostEqual(row["end"] - row["start"], healthy, delta=1e-9 * healthy)
        return entry["group"]

    def test_a_binomial_tree_is_re_rooted_off_the_link(self):
        # Rooted at group rank 0 (rack 0), the tree's pairs 0-4 cross to rack 1: re-rooted in rack 1.
        group = self.regrouped(run(4, "naive-binomial"), 16, COMPUTE + 2 * 4 * (ALPHA + self.N / B))
        rack = [member // 4 for member in group]
        for child in range(1, 16):
            parent = child & (child - 1)  # relative rank minus its lowest bit
            self.assertNotEqual({rack[child], rack[parent]}, {0, 1}, group)

    def test_the_hierarchical_allreduce_puts_its_groups_in_another_order(self):
        # Racks in the ring across the groups: 0-1-2-3 crosses the link whoever leads; with
        # racks 0 and 3 swapped (3-1-2-0) no two neighbours are racks 0 and 1.
        healthy = COMPUTE + 2 * 3 * (ALPHA + self.N / 4 / B) + 2 * 3 * (ALPHA + self.N / 16 / B)
        group = self.regrouped(run(4, "hierarchical"), 16, healthy)
        racks_in_order = [group[k] // 4 for k in range(0, 16, 4)]
        self.assertEqual(sorted(racks_in_order), [0, 1, 2, 3])
        for block in range(4):  # every rack's members stay together
            self.assertEqual({m // 4 for m in group[4 * block:4 * block + 4]}, {racks_in_order[block]})
        for k in range(4):
            self.assertNotEqual({racks_in_order[k], racks_in_order[(k + 1) % 4]}, {0, 1}, group)

    def test_the_ring_regroups_once_its_price_sees_the_hosts_links(self):
        self.regrouped(run(4, "ring"), 16, COMPUTE + 2 * 15 * (ALPHA + self.N / 16 / B))

    def test_three_racks_leave_the_hierarchical_no_arrangement_and_the_entry_says_so(self):
        # Three groups on a ring are all each other's neighbours: racks 0 and 1 always are.
        trace = run(3, "hierarchical")
        self.assert_nobody_dropped(trace, 12)
        self.assertFalse([e for e in trace["recovery"] if e["epoch_after"] > e["epoch_before"]])
        kept = [e for e in trace["recovery"] if "rack-0-1, which no rank owns" in e["reason"]
                and "every arrangement of the members crosses it): everyone kept" in e["reason"]]
        self.assertTrue(kept, [e["reason"] for e in trace["recovery"]])
        self.assertEqual([c["choice"] for c in kept[0]["prices"]["choices"]], ["keep"])


if __name__ == "__main__":
    unittest.main()
