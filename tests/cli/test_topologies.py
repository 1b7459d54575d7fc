"""Topologies as a user meets them: `collsim list topologies`, the rank order of every file
and generator, route alpha and B between chosen hosts (2-rank runs placed on them, read
from the trace), ring allreduce times against the alpha-beta formula worked out here, and
the one-line error for a bad generator string. Counts and costs are derived by hand in
docs/topologies.md; tests/sim/topology_test.cpp checks every route of every platform.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_topologies -v   (from tests/cli)
"""
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
MiB = 1024 * 1024
L, B = 1e-6, 10e9  # the generators' default link: 1 us, 10 GB/s


def hosts(count):
    return [f"host-{i}" for i in range(count)]


def devices(nodes, per_node):
    return [f"node-{i}-dev-{j}" for i in range(nodes) for j in range(per_node)]


# topology: (rank order, SimGrid links, worst ring-neighbour alpha, ring B). Links count
# both halves of every split-duplex link plus SimGrid's loopback: 2 x cables + 1.
STAR_8 = (hosts(8), 2 * 8 + 1, 2 * L, B)
RACK = (hosts(8), 2 * 8 + 1, 2 * L, 1.25e9)                 # host-3's link is the ring's bottleneck
FAT_TREE = (hosts(16), 2 * (16 + 4 * 2 * 2) + 1, 4 * L, B)  # 16 host links; 4 leaves x 2 tops x 2 links
TORUS_2D = (hosts(16), 2 * (16 * 2) + 1, 2 * L, B)          # a link per host and dimension; 3->4 takes 2 hops
TORUS_3D = (hosts(64), 2 * (64 * 3) + 1, 3 * L, B)         # 15->16 takes 3 hops (x wrap, y wrap, z)
DRAGONFLY = (hosts(32), 2 * (32 + 4 * 6 + 6) + 1, 5 * L, B)  # host, local, global links; 31->0 takes 5
NODES = (devices(4, 8), 2 * (32 + 4) + 1, 2 * 0.5e-6 + 2 * 2e-6, 12.5e9)  # device, NIC, NIC, device
def gpus(nodes, per_node):
    return [f"node-{i}-gpu-{j}" for i in range(nodes) for j in range(per_node)]


# rail: an NVLink port and a NIC per GPU, an uplink per rail; the ring's node crossings
# (GPU 7 of node i to GPU 0 of node i+1) change rails: NIC, 2 uplinks, NIC, 4 x 2 us
RAIL_4X8 = (gpus(4, 8), 2 * (2 * 32 + 8) + 1, 4 * 2e-6, 50e9)
RAIL_A100 = (gpus(4, 8), 2 * (2 * 32 + 8) + 1, 4 * 2e-6, 25e9)
# GB200 NVL72: 72 GPUs per node (one NVLink domain), a NIC each, 72 rails; 144 ranks ring
# 144 x 8 KiB (1 MiB would cut uneven chunks, where the formula is only an upper bound)
RAIL_NVL72 = (gpus(2, 72), 2 * (2 * 144 + 72) + 1, 4 * 2e-6, 50e9, 144 * 8192)
LEAF_SPINE = ([f"leaf-{i}-host-{j}" for i in range(4) for j in range(8)], 2 * (32 + 4) + 1, 4 * L, B)
NEW_TOPOLOGIES = {
    "star:8": STAR_8,
    "rack:8:3:1.25GBps": RACK, "topologies/rack-slow-link.xml": RACK,
    "fat-tree:2:4,4:1,2:1,2": FAT_TREE, "topologies/fat-tree-16.xml": FAT_TREE,
    "torus:4x4": TORUS_2D, "topologies/torus-4x4.xml": TORUS_2D,
    "torus:4x4x4": TORUS_3D, "topologies/torus-4x4x4.xml": TORUS_3D,
    "dragonfly:4:4:2": DRAGONFLY, "topologies/dragonfly-32.xml": DRAGONFLY,
    "nodes:4:8": NODES, "topologies/nodes-4x8.xml": NODES,
    "rail:4:8": RAIL_4X8, "dgx-h100:4": RAIL_4X8, "dgx-h200:4": RAIL_4X8, "dgx-a100:4": RAIL_A100,
    "gb200-nvl72:2": RAIL_NVL72, "leaf-spine:4:8": LEAF_SPINE,
}
GPU_FAMILIES = {"rail", "dgx-h100", "dgx-h200", "dgx-a100", "gb200-nvl72"}
OLD_FILES = {
    "topologies/star-8.xml": (hosts(8), 17),
    "topologies/star-64.xml": (hosts(64), 129),
    "topologies/cluster-1024.xml": (hosts(1024), 2049),
    "topologies/two-racks.xml": (hosts(16), 35),
}
SYNTAXES = ["star:P[:BW[:LAT]]", "rack:P:SLOW:SLOW_BW[:BW[:LAT]]", "fat-tree:LEVELS:DOWN:UP:COUNT[:BW[:LAT]]",
            "torus:XxY[xZ][:BW[:LAT]]", "dragonfly:G[,GL]:R[,RL]:N[:BW[:LAT]]",
            "nodes:N:G[:INTRA_BW[:NIC_BW[:INTRA_LAT[:NIC_LAT]]]]",
            "rail:N:G[:NVLINK_BW[:NIC_BW[:NVLINK_LAT[:NIC_LAT[:OVERSUB]]]]]", "dgx-h100:N[:OVERSUB][:NIC]",
            "dgx-h200:N[:OVERSUB][:NIC]", "dgx-a100:N[:OVERSUB][:NIC]", "gb200-nvl72:R[:OVERSUB][:NIC]",
            "leaf-spine:L:H[:BW[:LAT[:OVERSUB]]]"]


def ring_time(p, n, alpha, bandwidth):
    """Ring allreduce, contention-free: 2(p-1) steps of alpha + n/(pB), paced by the worst neighbour."""
    return 2 * (p - 1) * (alpha + n / p / bandwidth)


class TopologyTest(unittest.TestCase):
    def collsim(self, *args, timeout=120):
        return subprocess.run([COLLSIM, *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=timeout)

    def traced(self, *args):
        with tempfile.TemporaryDirectory(prefix="collsim-topo-") as folder:
            trace = Path(folder) / "trace.json"
            done = self.collsim("run", "--quiet", "--trace", trace, *args)
            self.assertEqual(done.returncode, 0, f"collsim run {' '.join(map(str, args))}: {done.stderr}")
            return json.loads(trace.read_text())


class Listing(TopologyTest):
    def test_every_file_and_generator_with_its_counts(self):
        done = self.collsim("list", "topologies")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = {}
        for line in done.stdout.splitlines():
            match = re.match(r"^(\S+) +(\d+) +(\d+)  (.*)$", line)
            if match:
                rows[match[1]] = (int(match[2]), int(match[3]), match[4])
        files = {str(p.relative_to(REPO)) for p in (REPO / "topologies").glob("*.xml")}
        self.assertEqual(files, {t for t in rows if t.startswith("topologies/")})
        for topology, (order, links, *_) in list(NEW_TOPOLOGIES.items()) + list(OLD_FILES.items()):
            with self.subTest(topology=topology):
                self.assertEqual(rows[topology][:2], (len(order), links))
        generators = {t: row for t, row in rows.items() if not t.startswith("topologies/")}
        self.assertEqual(set(generators), {t for t in NEW_TOPOLOGIES if ":" in t})
        for syntax in SYNTAXES:
            family = syntax.split(":")[0]
            self.assertTrue(any(row[2].startswith(syntax) for t, row in generators.items() if t.startswith(family + ":")),
                            f"{syntax} is not listed")
        self.assertRegex(done.stdout, r"(?m)^GENERATOR \(EXAMPLE\) +HOSTS +LINKS +SYNTAX: DESCRIPTION$")

    def test_help_names_the_generators(self):
        for command in (["run", "--help"], ["validate", "--help"]):
            out = self.collsim(*command).stdout
            for syntax in SYNTAXES:
                self.assertIn(syntax, out)
        self.assertIn("generators", self.collsim("list", "--help").stdout)
        self.assertIn("docs/topologies.md", self.collsim("--help").stdout)


class RankOrderAndRing(TopologyTest):
    def test_ring_over_every_new_topology_verifies_in_rank_order_at_the_formula(self):
        for topology, (order, links, alpha, bandwidth, *size) in NEW_TOPOLOGIES.items():
            n = size[0] if size else MiB
            # on GPUs collsim's ring would also pay NCCL's send/recv (docs/nccl.md): the links alone here
            gpus = ["--set", "nccl.gpu_cost=false"] if topology.split(":")[0] in GPU_FAMILIES else []
            with self.subTest(topology=topology):
                trace = self.traced("--topology", topology, "--size", n, *gpus)
                platform, summary = trace["platform"], trace["summary"]
                self.assertEqual(platform["rank_hosts"], order)
                self.assertEqual((platform["hosts"], platform["links"]), (len(order), links))
                self.assertTrue(summary["verified"])
                self.assertAlmostEqual(summary["collective_time"] / ring_time(len(order), n, alpha, bandwidth), 1,
                                       places=9)
                # the ring's model reads its ring neighbours' routes only: the same alpha and B
                self.assertAlmostEqual(platform["alpha"] / alpha, 1, places=9)
                self.assertAlmostEqual(platform["bandwidth"] / bandwidth, 1, places=9)
                self.assertAlmostEqual(summary["model_time"] / summary["collective_time"], 1, places=9)

    def test_rank_order_of_the_older_files(self):
        for topology, (order, links) in OLD_FILES.items():
            with self.subTest(topology=topology):
                trace = self.traced("--topology", topology, "--collective", "broadcast", "--size", 4096)
                self.assertEqual(trace["platform"]["rank_hosts"], order)
                self.assertEqual(trace["platform"]["links"], links)

    def test_nodes_with_every_parameter_given(self):
        # 3 nodes of 4 devices; inside 50 GB/s and 1 us, NICs 10 GB/s and 3 us
        p, n = 12, 12 * 64 * 1024
        trace = self.traced("--topology", "nodes:3:4:50GBps:10GBps:1us:3us", "--size", n)
        self.assertEqual(trace["platform"]["rank_hosts"], devices(3, 4))
        self.assertEqual(trace["platform"]["links"], 2 * (12 + 3) + 1)
        self.assertAlmostEqual(trace["summary"]["collective_time"] / ring_time(p, n, 2e-6 + 6e-6, 10e9), 1, places=9)

    def test_a_slow_link_fault_on_one_nic(self):
        # The ring crosses node-1-nic once per step in each direction: half its bandwidth paces every step.
        p, n = 32, MiB
        with tempfile.TemporaryDirectory() as folder:
            scenario = Path(folder) / "s.json"
            scenario.write_text(json.dumps({"name": "nic", "topology": "nodes:4:8", "collective": {"size": n},
                                            "faults": [{"kind": "slow-link", "link": "node-1-nic", "at": 0,
                                                        "factor": 0.5}]}))
            summary = self.traced(scenario)["summary"]
        self.assertAlmostEqual(summary["collective_time"] / ring_time(p, n, 5e-6, 6.25e9), 1, places=9)


class Routes(TopologyTest):
    def route(self, topology, a, b):
        """alpha and B of the route between hosts a and b (both ways: routes are symmetrical here)."""
        platform = self.traced("--topology", topology, "--workers", 2, "--size", 4096,
                               "--set", f'placement=["{a}", "{b}"]')["platform"]
        return platform["alpha"], platform["bandwidth"]

    def assert_routes(self, topology, expected):
        for (a, b), (alpha, bandwidth) in expected.items():
            with self.subTest(topology=topology, a=a, b=b):
                got_alpha, got_bandwidth = self.route(topology, a, b)
                self.assertAlmostEqual(got_alpha, alpha, delta=1e-12)
                self.assertEqual(got_bandwidth, bandwidth)

    def test_torus_hops_the_short_way_round(self):
        self.assert_routes("torus:4x4", {("host-0", "host-1"): (L, B), ("host-0", "host-3"): (L, B),  # wrap
                                         ("host-0", "host-10"): (4 * L, B), ("host-5", "host-15"): (4 * L, B)})
        self.assert_routes("topologies/torus-4x4x4.xml", {("host-0", "host-42"): (6 * L, B),
                                                          ("host-0", "host-63"): (3 * L, B)})

    def test_fat_tree_climbs_one_or_two_levels(self):
        self.assert_routes("fat-tree:2:4,4:1,2:1,2", {("host-0", "host-3"): (2 * L, B), ("host-0", "host-4"): (4 * L, B),
                                                      ("host-5", "host-15"): (4 * L, B)})

    def test_dragonfly_local_and_global_hops(self):
        self.assert_routes("dragonfly:4:4:2", {
            ("host-0", "host-1"): (2 * L, B),    # same router
            ("host-0", "host-2"): (3 * L, B),    # same group: one local link
            ("host-2", "host-8"): (3 * L, B),    # group 0 router 1 holds the global link to group 1 router 0
            ("host-0", "host-8"): (4 * L, B),    # one local hop to router 1 first
            ("host-0", "host-30"): (5 * L, B),   # local, global, local
        })

    def test_nodes_inside_and_across(self):
        self.assert_routes("nodes:4:8", {("node-0-dev-0", "node-0-dev-7"): (1e-6, 100e9),
                                         ("node-0-dev-0", "node-3-dev-5"): (5e-6, 12.5e9)})
        self.assert_routes("topologies/nodes-4x8.xml", {("node-2-dev-1", "node-2-dev-6"): (1e-6, 100e9),
                                                        ("node-1-dev-7", "node-2-dev-0"): (5e-6, 12.5e9)})

    def test_rack_slow_host(self):
        self.assert_routes("rack:8:3:1.25GBps", {("host-0", "host-3"): (2 * L, 1.25e9),
                                                 ("host-0", "host-4"): (2 * L, B)})


class ReadyScenarios(TopologyTest):
    def test_ring_scenarios_on_the_new_topologies(self):
        n = 64 * MiB
        expected = {"ring-nodes-4x8": (32, 5e-6, 12.5e9), "ring-torus-4x4": (16, 2 * L, B),
                    "ring-rack-slow-link": (8, 2 * L, 1.25e9)}
        for name, (p, alpha, bandwidth) in expected.items():
            with self.subTest(scenario=name):
                summary = self.traced(REPO / "scenarios" / "topologies" / f"{name}.json")["summary"]
                self.assertTrue(summary["verified"])
                self.assertAlmostEqual(summary["collective_time"] / ring_time(p, n, alpha, bandwidth), 1, places=9)


class BadGenerators(TopologyTest):
    BAD = ["torus:4y4", "torus", "torus:4x4:10GBps:1us:7", "fat-tree:2:4:1,2:1,2", "dragonfly:8:4:2",
           "nodes:4", "nodes:4:8:1Gx", "rack:8:8:1GBps", "star:0", "tours:4x4", "fat-tree:1:4:1000:1000"]

    def assert_one_line(self, done, topology):
        context = f"{topology}: exit {done.returncode}, stderr {done.stderr!r}"
        self.assertEqual(done.returncode, 2, context)
        self.assertEqual(done.stdout, "", context)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, context)
        self.assertTrue(lines[0].startswith("collsim: error: topology: "), context)
        self.assertIn(topology, lines[0])
        self.assertRegex(lines[0], r"; syntax \S+, e\.g\. \S+$|; allowed: star, rack, fat-tree, torus, dragonfly, nodes",
                         context)

    def test_flag_set_and_scenario_file_give_one_line(self):
        with tempfile.TemporaryDirectory() as folder:
            for topology in self.BAD:
                with self.subTest(topology=topology):
                    self.assert_one_line(self.collsim("run", "--topology", topology), topology)
                    self.assert_one_line(self.collsim("validate", "--set", f"topology={topology}"), topology)
                    scenario = Path(folder) / "bad.json"
                    scenario.write_text(json.dumps({"topology": topology}))
                    self.assert_one_line(self.collsim("run", scenario), topology)


if __name__ == "__main__":
    unittest.main()
