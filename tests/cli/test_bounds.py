"""The lower bound (the ranks' own links) and the topology bound (the tightest cut of the
platform), each checked against values worked out by hand from the platform files.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_bounds -v   (from tests/cli)
"""
import json
import subprocess
import unittest

from cli_common import COLLSIM, REPO, traced_run

N = 64 * 1024 * 1024          # bytes per rank
FAST, SLOW = 10e9, 1.25e9     # two-racks.xml: host links, the inter-rack link
TWO_RACKS = str(REPO / "topologies" / "two-racks.xml")
ONE_SLOW = str(REPO / "tests" / "cli" / "data" / "star-one-slow-link.xml")


def trace_of(*args):
    return traced_run("--size", "64MiB", *args)


class Bounds(unittest.TestCase):
    def assertClose(self, expected, actual, rel=1e-9):
        self.assertLessEqual(abs(actual - expected), rel * abs(expected), f"{actual} != {expected}")

    def test_two_racks_ring_meets_the_inter_rack_cut(self):
        t = trace_of("--topology", TWO_RACKS, "--workers", "16", "--algorithm", "ring")
        s, p = t["summary"], 16
        # the lower bound sees only the hosts' own 10 GB/s links ...
        self.assertClose(FAST, t["platform"]["injection_bandwidth"])
        self.assertClose(2 * (p - 1) / p * N / FAST, s["lower_bound_bandwidth"])
        # ... and the shortest route (same rack) is 2 x 1 us
        self.assertClose(4 * 2e-6, s["lower_bound_latency"])
        # rack B needs the sum of rack A's vectors: n bytes through the 1.25 GB/s link
        self.assertClose(N / SLOW, s["topology_bound"])
        cut = s["topology_cut"]
        self.assertEqual(["inter-rack_UP"], cut["bottleneck_links"])
        self.assertClose(SLOW, cut["capacity"])
        self.assertEqual("ranks 0-7 -> ranks 8-15 (bisection)", cut["cut"])
        # the ring pushes 2(p-1)/p n across it: efficiency p / (2(p-1)) against the cut
        self.assertClose(s["topology_bound"] / s["collective_time"], s["topology_efficiency"])
        self.assertClose(p / (2 * (p - 1)), s["topology_efficiency"], rel=0.01)
        self.assertClose(s["lower_bound"] / s["collective_time"], s["efficiency"])

    def test_a_scattered_placement_still_finds_the_rack_cut(self):
        hosts = [f"host-{h}" for pair in zip(range(8), range(8, 16)) for h in pair]
        t = trace_of("--topology", TWO_RACKS, "--workers", "16", "--set", "placement=" + json.dumps(hosts))
        cut = t["summary"]["topology_cut"]
        self.assertIn("platform order", cut["cut"])
        self.assertClose(N / SLOW, t["summary"]["topology_bound"])

    def test_star_has_no_tighter_cut_than_the_injection_bound(self):
        p = 16
        t = trace_of("--topology", f"star:{p}", "--workers", str(p))
        s = t["summary"]
        self.assertEqual(s["lower_bound"], s["topology_bound"])
        # the tightest cut is one host's own link (the bisection has 8 of them): n/B, below
        # the injection bound 2(p-1)/p n/B
        self.assertClose(FAST, s["topology_cut"]["capacity"])
        self.assertClose(N / FAST, s["topology_cut"]["time"])

    def test_one_slow_host_link_bounds_every_algorithm(self):
        p = 4
        t = trace_of("--topology", ONE_SLOW, "--workers", str(p))
        s = t["summary"]
        # mean of the four links: (3 x 10 + 1) / 4 GB/s
        self.assertClose((3 * 10e9 + 1e9) / 4, t["platform"]["injection_bandwidth"])
        self.assertClose(2 * (p - 1) / p * N / 7.75e9, s["lower_bound_bandwidth"])
        # host-3 must get the sum of the others (n bytes) through its own 1 GB/s link
        self.assertClose(N / 1e9, s["topology_bound"])
        self.assertIn(s["topology_cut"]["bottleneck_links"], (["l3_UP"], ["l3_DOWN"]))
        # ring sends 2(p-1)/p n through it: 2/3 of the topology bound
        self.assertClose(p / (2 * (p - 1)), s["topology_efficiency"], rel=1e-3)

    def test_bytes_that_cross_depend_on_the_collective(self):
        p = 16
        expected = {"broadcast": N, "reduce": N, "reduce-scatter": N / 2, "allgather": N / 2}
        for collective, crossing in expected.items():
            with self.subTest(collective=collective):
                t = trace_of("--topology", TWO_RACKS, "--workers", str(p), "--collective", collective)
                self.assertClose(crossing / SLOW, t["summary"]["topology_cut"]["time"])
                self.assertClose(crossing, t["summary"]["topology_cut"]["bytes"])

    def test_summary_names_the_bottleneck(self):
        out = subprocess.run([COLLSIM, "run", "--topology", TWO_RACKS, "--workers", "16", "--size", "64MiB"],
                             check=True, capture_output=True, text=True, timeout=120).stdout
        self.assertIn("through inter-rack_UP", out)
        self.assertIn("of the topology bound", out)


if __name__ == "__main__":
    unittest.main()
