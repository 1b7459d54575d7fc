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

With the ring between nodes of equal size the level runs chunk by chunk (collective.segment, here
per chunk) through NCCL's FIFO of 8: one chunk is the phases above one after the other; with k
chunks each GPU's NIC carries 2(M-1)/M of its n/g slice, and the NVLink work of the first chunk
before it and of the last chunk after it cannot overlap it (PipelinedRing below).

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


def run(topology, n, intra="nvls", inter=None, expect=0, extra=None, workers=None, segment=None):
    collective = {"algorithm": "hierarchical", "size": n, "intra": intra}
    if inter:
        collective["inter"] = inter
    if segment:
        collective["segment"] = segment
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
                    # the ring's level is pipelined: one chunk (segment n) runs the phases in turn
                    trace = run(f"rail:{nodes}:{g}:h100:10GBps:0us:0us", n, inter=inter, segment=n)
                    s = trace["summary"]
                    self.assertTrue(s["verified"], s)
                    want = expected(nodes, g, n, inter)
                    self.assertAlmostEqual(s["collective_time"], want, delta=want * 1e-9)
                    self.assertAlmostEqual(s["model_time"], want, delta=want * 1e-9)

    def test_each_gpu_talks_four_times_to_its_switch(self):
        # (halving-doubling between the two nodes: the level unpipelined, its phases by name)
        nodes, g, n = 2, 4, 1 << 20
        trace = run(f"rail:{nodes}:{g}:h100:10GBps:0us:0us", n, inter="halving-doubling")
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
        # halving-doubling between the two nodes: 2 (M - 1) messages per GPU
        self.assertEqual(len(messages), 4 * p + 2 * (nodes - 1) * p)
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["levels"], {"intra": "nvls", "inter": "halving-doubling"})
        # the bound without group_size: the pipelined level's (the model's max_followed_messages)
        self.assertEqual(trace["plan"]["limits"]["messages"], 200000)

    def test_gpu_cost_prices_the_switch_at_nvls_efficiency(self):
        # with NCCL's send/recv costs the NVLS level still verifies, costs more than the links
        # alone, and the model prices it as run, pipelined too: each GPU posts its messages across
        # the network one after another (NCCL's getNetOverhead), holding its actor until the last
        # is posted, and the model's rounds end no earlier and post in the run's order (the early
        # posts a FIFO ahead after the round's own sends)
        nodes, n = 2, 8 << 20
        for inter in ("halving-doubling", "ring"):
            with self.subTest(inter=inter):
                plain = run(f"dgx-h100:{nodes}", n, inter=inter, extra={"nccl": {"gpu_cost": False}})["summary"]
                priced = run(f"dgx-h100:{nodes}", n, inter=inter, extra={"nccl": {"gpu_cost": True}})["summary"]
                self.assertTrue(priced["verified"])
                self.assertGreater(priced["collective_time"], plain["collective_time"])
                self.assertAlmostEqual(priced["collective_time"], priced["model_time"],
                                       delta=priced["model_time"] * 1e-9)

    def test_pipelined_with_gpu_costs_the_model_is_the_run(self):
        # more chunks than the FIFO's 8 (2 MiB each), 2 to 4 nodes, H100 and GB200 nodes
        for topology, size in (("dgx-h100:2", 64 << 20), ("dgx-h100:3", 96 << 20), ("dgx-h100:4", 64 << 20),
                               ("gb200-nvl72:2", 36 << 20)):
            with self.subTest(topology=topology, size=size):
                s = run(topology, size, inter="ring", extra={"nccl": {"gpu_cost": True}})["summary"]
                self.assertTrue(s["verified"])
                self.assertAlmostEqual(s["collective_time"], s["model_time"], delta=s["model_time"] * 1e-9)


class PipelinedRing(unittest.TestCase):
    """NVLS inside the nodes and the ring between them, chunk by chunk (nvls_plan.hpp, ring)."""

    def test_each_chunk_goes_through_the_switch_and_round_the_ring_once(self):
        # k chunks of c; per chunk each GPU sends c and c/g to its switch, the switch sends it c/g
        # and c; GPU i of node m sends 2(M-1) pieces of c/(gM) to GPU i of node m+1 and receives as
        # many from node m-1's: every piece of every slice crosses each rail link of the ring once
        for nodes, g, k in [(2, 4, 4), (3, 2, 3), (4, 2, 2)]:
            with self.subTest(nodes=nodes, g=g, k=k):
                c = g * nodes * 4096  # elements divide evenly: pieces of 4096 floats
                n, p = k * 4 * c, nodes * g
                trace = run(f"rail:{nodes}:{g}:h100:10GBps:0us:0us", n, segment=4 * c)
                self.assertTrue(trace["summary"]["verified"], trace["summary"])
                messages = trace["messages"]
                self.assertEqual(len(messages), k * p * (4 + 2 * (nodes - 1)))
                ring = [m for m in messages if m["src"] < p and m["dst"] < p]
                self.assertEqual(len(ring), k * p * 2 * (nodes - 1))
                for m in ring:
                    self.assertEqual(m["bytes"], 4 * c // (g * nodes))
                    self.assertEqual(m["dst"] % g, m["src"] % g)  # GPU i to GPU i
                    self.assertEqual(m["dst"] // g, (m["src"] // g + 1) % nodes)  # to the next node
                for gpu in range(p):
                    up = sum(m["bytes"] for m in messages if m["src"] == gpu and m["dst"] >= p)
                    down = sum(m["bytes"] for m in messages if m["dst"] == gpu and m["src"] >= p)
                    self.assertEqual((up, down), (n + n // g, n // g + n))

    def test_the_ring_overlaps_the_nodes_reduction(self):
        # k chunks, NIC-bound (B_nic well below B_nv g / (g + 1)): the NIC carries
        # 2(M-1)/M n/g; before its first byte the first chunk goes up to the switch and its slice
        # comes back ((1 + 1/g) c / B_nv), after its last the last chunk's slice goes up and the
        # chunk comes down (as much): the least time. Unpipelined the NVLink's whole 2(1 + 1/g) n
        # adds to the NIC's. The pipeline's fill is bounded by its depth: 2 + 2(M-1) x 8 steps
        # (the FIFO's lag of 7 on each ring hop) and the FIFO's 8 chunks, each NVLink step
        # (1 + 1/g) c / B_nv.
        for nodes, g, nic in [(2, 4, 10e9), (2, 4, 45e9), (3, 4, 45e9), (4, 2, 45e9)]:
            with self.subTest(nodes=nodes, g=g, nic=nic):
                c, k = 1 << 19, 128
                n = k * c
                trace = run(f"rail:{nodes}:{g}:h100:{nic / 1e9:g}GBps:0us:0us", n, segment=c)
                s = trace["summary"]
                self.assertTrue(s["verified"], s)
                step = (1 + 1 / g) * c / B_NV
                nic_time = 2 * (nodes - 1) / nodes * (n / g) / nic
                least = nic_time + 2 * step
                depth = 2 + 2 * (nodes - 1) * 8
                unpipelined = 2 * (n / B_NV + n / (g * B_NV)) + 2 * (nodes - 1) * (n / g) / (nodes * nic)
                self.assertGreaterEqual(s["collective_time"], least * (1 - 1e-12))
                self.assertLessEqual(s["collective_time"], nic_time + (depth + 8) * step)
                self.assertLess(s["collective_time"], unpipelined - (2 * k - depth - 8) * step)
                self.assertAlmostEqual(s["collective_time"], s["model_time"], delta=s["model_time"] * 1e-9)

    def test_nodes_of_different_sizes_and_other_levels_stay_unpipelined(self):
        # 3 nodes of 4 GPUs with 10 workers: 4, 4 and 2 (the nodes' slices would not line up
        # for the ring): the level moves the vector at once, 4 messages per GPU with its switch
        # (pipelined, 40 chunks of 1 MiB would make 160)
        trace = run("rail:3:4:h100:10GBps:0us:0us", 40 << 20, workers=10)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        to_switch = [m for m in trace["messages"] if m["dst"] >= 10 or m["src"] >= 10]
        self.assertEqual(len(to_switch), 4 * 10)


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
