"""Lab 3 (docs/labs/lab3-topology-matters.md): every command of the page runs, and every
figure it quotes is checked against the alpha-beta arithmetic written out here.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_lab3 -v   (from tests/cli)
"""
import csv
import json
import re
import unittest

import labs_common

from labs_common import OUT, REPO, LabTest, figures_in_page, run_lab_commands

PAGE, ANSWERS = "lab3-topology-matters.md", "answers-lab3.md"
N, P, MIB = 64 * 2**20, 16, 2**20
US = 1e-6


def ring(alpha, bandwidth, n=N, p=P, sharing=1):
    return 2 * (p - 1) * (alpha + sharing * n / p / bandwidth)


def hierarchical(alpha_in, b_in, alpha_out, b_out, n=N, g=8, groups=2):
    # g rings of n/(g groups) between the groups share the link: g messages at a time
    return 2 * (g - 1) * (alpha_in + n / g / b_in) + 2 * (groups - 1) * (alpha_out + g * n / (g * groups) / b_out)


STAR = ring(2 * US, 10e9)
RACKS = ring(12 * US, 1.25e9)
ALTERNATING = ring(12 * US, 1.25e9, sharing=8)
RACKS_HIER = hierarchical(2 * US, 10e9, 12 * US, 1.25e9)
NODES = ring(5 * US, 12.5e9)
NODES_HIER = hierarchical(1 * US, 100e9, 5 * US, 12.5e9)


# Part 2, 1 GiB over 8 servers of 8 GPUs: NVLink 450 GB/s and 0.5 us a link, NICs 50 GB/s
# and 2 us. One NIC per server: a crossing is device, NIC, NIC, device (5 us); the 8
# inter-node rings of the hierarchical allreduce share the NIC. A NIC per GPU: the ring's
# crossings change rails (NIC, 2 uplinks, NIC: 8 us); each rail's ring has its own NICs.
GIB, GPUS, SERVERS = 2**30, 64, 8


def gpu_hierarchical(alpha_out, sharing):
    return (2 * 7 * (1 * US + GIB / 8 / 450e9)
            + 2 * (SERVERS - 1) * (alpha_out + sharing * GIB / GPUS / 50e9))


GPU_NODES_RING = ring(5 * US, 50e9, n=GIB, p=GPUS)
GPU_NODES_HIER = gpu_hierarchical(5 * US, 8)
GPU_RAIL_RING = ring(8 * US, 50e9, n=GIB, p=GPUS)
GPU_RAIL_HIER = gpu_hierarchical(4 * US, 1)
# 8 channels: each NIC carries one channel's crossing of GIB / (8 x 64); a GPU's NVLink port
# carries the 7 channels whose next GPU is in its server
GPU_RAIL_CHANNELS = 2 * (GPUS - 1) * max(1 * US + 7 * GIB / 512 / 450e9, 8 * US + GIB / 512 / 50e9)


# the networks and the sizes: inputs, not results
GIVEN = {"0.5 us", "1 us", "2 us", "10 us", "10 GB/s", "12.5 GB/s", "1.25 GB/s", "100 GB/s", "450 GB/s", "50 GB/s",
         "400 Gbit/s", "4 KiB", "4 MiB", "64 MiB", "1 GiB"}


class Lab3(LabTest):
    @classmethod
    def setUpClass(cls):
        run_lab_commands(PAGE)
        out = OUT
        cls.t = {name: json.loads((out / f"lab3-{name}.json").read_text())
                 for name in ("star", "two-racks", "alternating", "two-racks-hierarchical", "nodes",
                              "nodes-hierarchical", "auto", "gpu-nodes-ring", "gpu-nodes-hierarchical",
                              "gpu-rail-ring", "gpu-rail-hierarchical", "gpu-rail-channels")}
        with open(out / "lab3-sizes.csv") as table:
            cls.sizes = {(row["topology"], row["collective.algorithm"], int(float(row["collective.size"]))):
                         float(row["collective_time"]) for row in csv.DictReader(table)}
        cls.html = " ".join(re.sub(r"<[^>]+>", " ", (out / "lab3-two-racks.html").read_text()).split())
        cls.page = figures_in_page(PAGE) + " " + labs_common.section_text(ANSWERS, "What the runs show")
        cls.answers = figures_in_page(ANSWERS)

    def time(self, name):
        return self.t[name]["summary"]["collective_time"]

    def test_gpu_servers_one_nic_the_two_are_equal(self):
        self.assertClose(GPU_NODES_RING, self.time("gpu-nodes-ring"), rel=1e-9)
        self.assertClose(GPU_NODES_HIER, self.time("gpu-nodes-hierarchical"), rel=1e-9)
        self.assertQuoted("the ring takes 42.91 ms, the hierarchical allreduce 41.84 ms", "page")
        self.assertQuoted(f"ring 2·63 (5 us + 16 MiB / 50 GB/s) = {GPU_NODES_RING * 1e3:.2f} ms", "answers")
        self.assertQuoted(f"= {GPU_NODES_HIER * 1e3:.2f} ms: the 8 inter-node rings share the NIC", "answers")
        self.assertRounds("42.91 ms", GPU_NODES_RING)
        self.assertRounds("41.84 ms", GPU_NODES_HIER)
        for name in ("gpu-nodes-ring", "gpu-nodes-hierarchical"):
            self.assertClose(GIB / 50e9, self.t[name]["summary"]["topology_bound"], rel=1e-9)
        self.assertQuoted("(1 GiB through one NIC, 21.47 ms)", "page")

    def test_gpu_servers_a_nic_per_gpu_flips_the_answer(self):
        self.assertClose(GPU_RAIL_RING, self.time("gpu-rail-ring"), rel=1e-9)
        self.assertClose(GPU_RAIL_HIER, self.time("gpu-rail-hierarchical"), rel=1e-9)
        factor = GPU_RAIL_RING / GPU_RAIL_HIER
        self.assertQuoted(f"the hierarchical allreduce takes {GPU_RAIL_HIER * 1e3:.4g} ms, {factor:.3g} times faster "
                          f"than the ring ({GPU_RAIL_RING * 1e3:.4g} ms)", "page")
        self.assertQuoted(f"= {GPU_RAIL_HIER * 1e3:.4g} ms; each rail's ring has its own NICs", "answers")
        self.assertQuoted(f"2·63 (8 us + 16 MiB / 50 GB/s) = {GPU_RAIL_RING * 1e3:.2f} ms", "answers")
        # the ring gains nothing from the 7 extra NICs (it pays the spine's latency instead)
        self.assertGreater(GPU_RAIL_RING, GPU_NODES_RING)
        self.assertLess(GPU_NODES_RING / GPU_NODES_HIER, 1.03)
        self.assertGreater(factor, 4.5)

    def test_gpu_servers_channels_use_every_nic(self):
        self.assertEqual(2 * MIB, GIB // (8 * GPUS))   # a channel's chunk, what each NIC moves per step
        self.assertQuoted("each step moves 2 MiB per NIC", "page")
        self.assertClose(GPU_RAIL_CHANNELS, self.time("gpu-rail-channels"), rel=1e-9)
        self.assertClose(GPU_RAIL_CHANNELS, self.t["gpu-rail-channels"]["summary"]["model_time"], rel=1e-9)
        self.assertQuoted(f"the ring takes {GPU_RAIL_CHANNELS * 1e3:.4g} ms, faster than the hierarchical", "page")
        self.assertQuoted(f"the hierarchical allreduce wins ({GPU_RAIL_HIER * 1e3:.4g} ms against {GPU_RAIL_RING * 1e3:.4g} ms), "
                          f"until the ring runs one channel per NIC and wins back ({GPU_RAIL_CHANNELS * 1e3:.4g} ms against "
                          f"{GPU_RAIL_HIER * 1e3:.4g} ms)", "page")
        self.assertQuoted(f"126 × 49.94 us = {GPU_RAIL_CHANNELS * 1e3:.4g} ms, "
                          f"{GPU_RAIL_HIER / GPU_RAIL_CHANNELS:.3g} times faster", "answers")
        self.assertLess(GPU_RAIL_CHANNELS, GPU_RAIL_HIER)

    def test_one_switch(self):
        self.assertClose(STAR, self.time("star"))
        self.assertRounds("12.64 ms", STAR)
        self.assertQuoted("the ring takes 12.64 ms, 99.5% of the lower bound", "page")
        s = self.t["star"]["summary"]
        self.assertEqual(s["lower_bound"], s["topology_bound"])
        self.assertRounds("99.5%", s["efficiency"])
        self.assertClose(STAR, self.sizes[("star:16", "hierarchical", N)])

    def test_two_racks_ring_is_paced_by_the_slow_link(self):
        self.assertClose(RACKS, self.time("two-racks"))
        self.assertRounds("101.0 ms", RACKS)
        self.assertQuoted("101.0 ms = 30 x (12 us + 4 MiB / 1.25 GB/s), eight times the star", "page")
        self.assertRounds("8", RACKS / STAR)
        s = self.t["two-racks"]["summary"]
        self.assertClose(N / 1.25e9, s["topology_bound"])
        self.assertRounds("53.69 ms", s["topology_bound"], "page")
        self.assertIn("inter-rack_UP", s["topology_cut"]["bottleneck_links"])
        self.assertQuoted("through inter-rack_UP", "page")
        self.assertRounds("53.1%", s["topology_efficiency"])
        self.assertQuoted("The ring reaches 53.1% of it", "page")
        self.assertQuoted("1.875 n", "page")
        self.assertClose(1.875, 2 * (P - 1) / P)

    def test_the_report_shows_the_bottleneck_link(self):
        # the report's headline is the link the topology bound names, with the bound itself
        text = self.html.replace(" ,", ",").replace("&gt;", ">")
        for said in ("The topology bound names the bottleneck: at least 64 MiB must cross inter-rack_UP (1.25 GB/s), "
                     "53.6871 ms at the least",
                     "The most loaded link, inter-rack_UP, carried 120 MiB in 30 messages: 100% of what its 1.25 GB/s "
                     "could carry in the run",
                     "topology bound 53.6871 ms (cut ranks 0-7 -> ranks 8-15 (bisection): 64 MiB at 1.25 GB/s, through "
                     "inter-rack_UP)",
                     "12.5% of the lower bound, 53.1% of the topology bound"):
            self.assertTrue(said in text, f"the report should say: {said}")
        self.assertRounds("101 ms", self.time("two-racks"))
        self.assertQuoted("run at 100% of 1.25 GB/s for the whole 101 ms", "page")
        for said in ("inter-rack_UP: 100% of 1.25 GB/s from 0 s to 101 ms", "inter-rack_DOWN: 100% of 1.25 GB/s from 0 s to 101 ms"):
            self.assertTrue(said in self.html, f"the report should say: {said}")
        run = self.time("two-racks")
        links = {l["name"]: l for l in self.t["two-racks"]["links"]["list"]}
        utilisation = {name: l["bytes"] / (l["bandwidth"] * run) for name, l in links.items()}
        busy = {name: l["busy_time"] / run for name, l in links.items()}
        self.assertEqual({"inter-rack_UP", "inter-rack_DOWN"}, {n for n, u in utilisation.items() if u > 0.99})
        crossing = {"rack-a_link_7_UP", "rack-b_link_8_DOWN", "rack-b_link_15_UP", "rack-a_link_0_DOWN"}
        host_links = {n for n in links if "_link_" in n}
        self.assertEqual(32, len(host_links))
        for name in host_links:
            with self.subTest(link=name):
                self.assertEqual(30 * 4 * MIB, links[name]["bytes"])
                # every host link moves its bytes at 1/8 of its bandwidth over the run ...
                self.assertRounds("12.5%", utilisation[name])
                # ... the crossing ones all the time, held to the inter-rack link's pace; the others in bursts
                self.assertRounds("100%" if name in crossing else "12.5%", busy[name])
        self.assertEqual(30 * 4 * MIB, links["inter-rack_UP"]["bytes"])
        self.assertQuoted("(30 chunks of 4 MiB, 120 MiB each)", "page")
        self.assertQuoted("(`rack-a_link_7_UP` and `rack-b_link_8_DOWN`, `rack-b_link_15_UP` and `rack-a_link_0_DOWN`)",
                          "page")
        self.assertQuoted("busy all the time at 12.5% of their bandwidth", "page")
        self.assertQuoted(f"The other {len(host_links) - len(crossing)} send theirs at full speed and then wait: busy "
                          "12.5% of the time, in bursts of 0.42 ms per 3.37 ms step", "page")
        self.assertRounds("0.42 ms", 4 * MIB / 10e9)
        self.assertRounds("3.37 ms", 12 * US + 4 * MIB / 1.25e9)

    def test_alternating_placement(self):
        self.assertClose(ALTERNATING, self.time("alternating"))
        self.assertRounds("805.7 ms", ALTERNATING)
        self.assertQuoted("805.7 ms, 8 times slower again", "page")
        self.assertClose(self.t["two-racks"]["summary"]["topology_bound"],
                         self.t["alternating"]["summary"]["topology_bound"])

    def test_hierarchical_on_two_racks(self):
        self.assertClose(RACKS_HIER, self.time("two-racks-hierarchical"))
        self.assertRounds("65.48 ms", RACKS_HIER)
        self.assertQuoted("65.48 ms, 1.54 times faster than the ring and 82.0% of the topology bound", "page")
        self.assertRounds("1.54", RACKS / RACKS_HIER)
        self.assertRounds("82.0%", N / 1.25e9 / RACKS_HIER)
        self.assertRounds("0.84 ms", 2 * US + 8 * MIB / 10e9)
        self.assertRounds("26.86 ms", 12 * US + 8 * 4 * MIB / 1.25e9)
        self.assertQuoted("14 steps of 8 MiB inside the racks (0.84 ms each) and 2 steps in which 8 messages of 4 MiB share the slow link (26.86 ms each)", "page")

    def test_two_nodes_of_eight_devices(self):
        self.assertClose(NODES, self.time("nodes"))
        self.assertClose(NODES_HIER, self.time("nodes-hierarchical"))
        s = self.t["nodes"]["summary"]
        self.assertClose(N / 12.5e9, s["topology_bound"])
        self.assertIn("node-0-nic_UP", s["topology_cut"]["bottleneck_links"])
        self.assertQuoted("the ring takes 10.22 ms = 30 x (5 us + 4 MiB / 12.5 GB/s)", "page")
        self.assertQuoted("the topology bound is 5.369 ms through a NIC (`node-0-nic_UP`)", "page")
        self.assertQuoted("takes 6.567 ms (81.8% of it), 1.56 times faster than the ring", "page")
        self.assertRounds("10.22 ms", NODES)
        self.assertRounds("5.369 ms", N / 12.5e9)
        self.assertRounds("6.567 ms", NODES_HIER)
        self.assertRounds("81.8%", N / 12.5e9 / NODES_HIER)
        self.assertRounds("1.56", NODES / NODES_HIER)

    def test_small_messages_favour_the_hierarchy_more(self):
        n = 4096
        ring_racks = self.sizes[("topologies/two-zones.xml", "ring", n)]
        hier_racks = self.sizes[("topologies/two-zones.xml", "hierarchical", n)]
        self.assertClose(ring(12 * US, 1.25e9, n=n), ring_racks)
        self.assertClose(hierarchical(2 * US, 10e9, 12 * US, 1.25e9, n=n), hier_racks)
        self.assertQuoted("6.5 times faster on the two racks (56.0 us against 366.1 us)", "page")
        self.assertRounds("6.5", ring_racks / hier_racks)
        self.assertRounds("56.0 us", hier_racks)
        self.assertRounds("366.1 us", ring_racks)
        ring_nodes = self.sizes[("nodes:2:8", "ring", n)]
        hier_nodes = self.sizes[("nodes:2:8", "hierarchical", n)]
        self.assertClose(ring(5 * US, 12.5e9, n=n), ring_nodes)
        self.assertClose(hierarchical(1 * US, 100e9, 5 * US, 12.5e9, n=n), hier_nodes)
        self.assertQuoted("6.2 times faster (24.4 us against 150.6 us)", "page")
        self.assertRounds("6.2", ring_nodes / hier_nodes)
        self.assertRounds("24.4 us", hier_nodes)
        self.assertRounds("150.6 us", ring_nodes)
        # the hierarchy wins at every size on both networks, and never loses on the star
        for topology in ("topologies/two-zones.xml", "nodes:2:8"):
            for (t, algorithm, size), value in self.sizes.items():
                if t == topology and algorithm == "ring":
                    self.assertLess(self.sizes[(t, "hierarchical", size)], value)

    def test_auto_by_simulation_sees_the_contention(self):
        auto = self.t["auto"]["auto"]
        self.assertEqual("hierarchical", auto["chosen"])
        rows = {c["algorithm"]: c for c in auto["candidates"]}
        raben = rows["rabenseifner"]
        # the alpha-beta formula on the worst route (12 us, 1.25 GB/s) ignores the sharing ...
        formula = 2 * 4 * 12 * US + 2 * 15 / 16 * N / 1.25e9
        self.assertRounds("100.8 ms", formula)
        self.assertQuoted("Rabenseifner's formula says 100.8 ms", "page")
        self.assertRounds("435.4 ms", raben["simulated_time"])
        self.assertQuoted("it takes 435.4 ms", "page")
        # ... which the cost model prices, as the simulation shows it
        self.assertClose(raben["simulated_time"], raben["model_time"], rel=1e-3)
        self.assertQuoted("collsim's cost model prices that sharing", "page")
        # its first and last steps: 8 messages of n/2 through one direction of the slow link
        self.assertRounds("214.8 ms", 12 * US + 8 * (N / 2) / 1.25e9)
        self.assertQuoted("1.25 GB/s = 214.8 ms", "answers")
        self.assertQuoted("4.3 times the formula", "answers")
        self.assertRounds("4.3", raben["simulated_time"] / formula)

    def test_answers_arithmetic(self):
        self.assertEqual((128 * MIB, 32 * MIB, 256, 512), (GIB // 8, N // 2, 4096 // 16, 4096 // 8))
        for figure in ("128 MiB / 450 GB/s", "8 x 32 MiB", "256 B / 1.25 GB/s", "512 B / 10 GB/s"):
            self.assertQuoted(figure, "answers")
        self.assertRounds("33.62 us", 1 * US + 7 * 2 * MIB / 450e9, "answers")
        self.assertRounds("49.94 us", 8 * US + 2 * MIB / 50e9, "answers")
        self.assertRounds("3.367 ms", 12 * US + 4 * MIB / 1.25e9)
        self.assertQuoted("= 3.367 ms", "answers")
        self.assertRounds("0.421 ms", 2 * US + 4 * MIB / 10e9)
        self.assertQuoted("30 x 0.421 ms", "answers")
        self.assertRounds("11.77 ms", 14 * (2 * US + 8 * MIB / 10e9))
        self.assertRounds("53.71 ms", 2 * (12 * US + 8 * 4 * MIB / 1.25e9))
        self.assertQuoted("= 11.77 ms inside the racks", "answers")
        self.assertQuoted("= 53.71 ms between them: 65.48 ms", "answers")
        self.assertRounds("26.86 ms", 12 * US + 8 * 4 * MIB / 1.25e9)

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 2)


    def test_the_grading_sheet_grades_formula_answers(self):
        for student in ("alice", "carol"):
            with self.subTest(student=student):
                sheet, values = labs_common.student_sheet("lab3", student)
                g, b_in, b_out, n = (labs_common.si(values[k]) for k in ("g", "Bin", "Bout", "n"))
                g = int(g)
                # two nodes: a crossing is device, NIC, NIC, device (2 x 0.5 us + 2 x 2 us); the
                # g rings between the nodes share the NIC
                ring_time = ring(5 * US, b_out, n=n, p=2 * g)
                hier_time = hierarchical(1 * US, b_in, 5 * US, b_out, n=n, g=g)
                bound = n / b_out  # n bytes must cross the cut, through one NIC
                answers = {"q1": ring_time, "q2": bound, "q4": hier_time}
                printed = {run: labs_common.run_sheet_command(sheet, run) for run in ("ring", "hier")}
                for question, run in (("q3", "ring"), ("q6", "hier")):
                    answers[question] = float(re.search(r"([0-9.]+)% of the topology bound", printed[run]).group(1)) / 100
                answers["q5"] = (labs_common.summary(printed["ring"], "simulated time")
                                 / labs_common.summary(printed["hier"], "simulated time"))
                self.assertClose(bound / ring_time, answers["q3"], rel=2e-3)
                self.assertClose(ring_time / hier_time, answers["q5"], rel=1e-3)
                self.assertGradedRight("lab3", student, answers)
                self.assertGradedWrong("lab3", student, answers, "q4", 0.97)

    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
