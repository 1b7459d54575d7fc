"""hierarchical with NVLS inside the nodes (collective.intra = nvls): each node's NVSwitch
reduces its GPUs' vectors (NVLink SHARP) and multicasts the result, the level between the nodes
is ring, halving-doubling or tree. Worked by hand on a rail platform of H100 nodes with round
link figures and no latency (rail:M:G:h100:10GBps:0us:0us: NVLink 450 GB/s per GPU each way,
a 10 GB/s NIC per GPU, each rail on its own switch), the links alone (nccl.gpu_cost false),
an ideal network:

    reduce-scatter  n / B_nv (every GPU's vector up its NVLink port to the switch)
                    + n / (g B_nv) (its chunk back down)
    between nodes   piece n / g among GPU i of every node, on rail i: the level's formula
    allgather       n / (g B_nv) (its chunk up to the multicast) + n / B_nv (the vector down)

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -B -m unittest -v test_hierarchy_nvls
"""
import json
import math
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

B_NV, B_NIC = 450e9, 10e9


def across(level, nodes, piece):
    """The level between the nodes on a piece of `piece` bytes, with no latency."""
    if level == "ring":
        return 2 * (nodes - 1) * piece / (nodes * B_NIC)
    if level == "halving-doubling":
        return 2 * (nodes - 1) / nodes * piece / B_NIC
    return 2 * math.ceil(math.log2(nodes)) * piece / B_NIC  # binomial reduce, then broadcast


def expected(nodes, g, n, inter):
    inside = 2 * (n / B_NV + n / (g * B_NV))
    return inside + (across(inter, nodes, n / g) if nodes > 1 else 0)


def run(topology, n, intra="nvls", inter=None, expect=0, extra=None, workers=None):
    collective = {"algorithm": "hierarchical", "size": n, "intra": intra}
    if inter:
        collective["inter"] = inter
    scenario = {"name": "nvls-level", "topology": topology, "network": "ideal", "collective": collective,
                "nccl": {"gpu_cost": False}}
    if workers:
        scenario["workers"] = workers
    for section, values in (extra or {}).items():  # merged into the scenario's sections
        scenario.setdefault(section, {}).update(values)
    with tempfile.TemporaryDirectory(prefix="collsim-nvls-level-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        trace = Path(folder) / "t.json"
        done = subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet"],
                              capture_output=True, text=True, timeout=300)
        if expect:
            assert done.returncode == expect, (done.returncode, done.stderr)
            return done
        assert done.returncode == 0, done.stderr
        return json.loads(trace.read_text())


class NvlsLevel(unittest.TestCase):
    def test_each_level_between_the_nodes_takes_the_hand_worked_time(self):
        for nodes, g, n in [(2, 4, 4 << 20), (4, 8, 8 << 20), (2, 8, 3 << 20), (1, 8, 1 << 20)]:
            for inter in ("ring", "halving-doubling", "tree") if nodes > 1 else ("ring",):
                with self.subTest(nodes=nodes, g=g, n=n, inter=inter):
                    trace = run(f"rail:{nodes}:{g}:h100:10GBps:0us:0us", n, inter=inter)
                    s = trace["summary"]
                    self.assertTrue(s["verified"], s)
                    want = expected(nodes, g, n, inter)
                    self.assertAlmostEqual(s["collective_time"], want, delta=want * 1e-9)
                    self.assertAlmostEqual(s["model_time"], want, delta=want * 1e-9)

    def test_each_gpu_talks_four_times_to_its_switch(self):
        nodes, g, n = 2, 4, 1 << 20
        trace = run(f"rail:{nodes}:{g}:h100:10GBps:0us:0us", n)
        p = nodes * g
        messages = trace["messages"]
        by_phase = {}
        for m in messages:
            by_phase.setdefault(m["phase"], []).append(m)
        # up and down in each phase: p messages each way to the reductions, p each way to the multicasts
        self.assertEqual(len(by_phase["nvls-reduce-scatter"]), 2 * p)
        self.assertEqual(len(by_phase["nvls-allgather"]), 2 * p)
        up = [m for m in by_phase["nvls-reduce-scatter"] if m["src"] < p]
        self.assertEqual({m["bytes"] for m in up}, {n})
        down = [m for m in by_phase["nvls-allgather"] if m["src"] >= p]
        self.assertEqual({m["bytes"] for m in down}, {n})
        # the ring between the nodes: 2 (M - 1) messages per GPU
        self.assertEqual(len(messages), 4 * p + 2 * (nodes - 1) * p)
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["levels"], {"intra": "nvls", "inter": "ring"})
        self.assertEqual(trace["plan"]["limits"]["messages"], 2 * p * (p + 1))  # the bound without group_size

    def test_gpu_cost_prices_the_switch_at_nvls_efficiency(self):
        # with NCCL's send/recv costs the NVLS level still verifies, and costs more than the links alone
        nodes, g, n = 2, 8, 8 << 20
        plain = run(f"dgx-h100:{nodes}", n)["summary"]
        priced = run(f"dgx-h100:{nodes}", n, extra={"nccl": {"gpu_cost": True}})["summary"]
        self.assertTrue(priced["verified"])
        self.assertGreater(priced["collective_time"], plain["collective_time"])
        self.assertAlmostEqual(priced["collective_time"], priced["model_time"], delta=priced["model_time"] * 1e-6)


class BadNvlsLevel(unittest.TestCase):
    def refused(self, fragment, topology="dgx-h100:2", **kwargs):
        done = run(topology, 1 << 20, expect=2, **kwargs)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), done.stderr)
        self.assertIn(fragment, lines[0])

    def test_refused_where_the_nvswitch_does_not_reduce(self):
        self.refused("collective.intra: nvls reduces in each node's NVSwitch (NVLink SHARP, H100 and later), which "
                     "a100 here has not", topology="dgx-a100:2")
        self.refused("collective.intra: NCCL's algorithms run on GPUs", topology="star:4")

    def test_refused_between_the_nodes_and_in_the_formulas(self):
        self.refused("collective.inter: nvls reduces in one node's NVSwitch", intra="ring", inter="nvls")
        done = subprocess.run([COLLSIM, "model", "--algorithm", "hierarchical", "--workers", "8", "--size", "1MiB",
                               "--bandwidth", "10GBps", "--latency", "1us", "--intra", "nvls"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertTrue(done.stderr.startswith("collsim: error: --intra: nvls reduces in a platform's NVSwitch"))

    def test_refused_with_groups_other_than_the_nodes_and_with_recovery(self):
        self.refused("collective.intra: nvls needs the groups to be the nodes", extra={"collective": {"group_size": 4}})
        self.refused("collective.intra: nvls reduces in the NVSwitches' actors",
                     extra={"recovery": {"policy": "rebuild"}})


if __name__ == "__main__":
    unittest.main()
