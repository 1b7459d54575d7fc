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



def summary_rows(*args, expect=0):
    """`collsim run`'s summary as {row name: text} (its two-column rows)."""
    done = subprocess.run([COLLSIM, "run", *args], capture_output=True, text=True, timeout=120)
    if done.returncode != expect:
        raise AssertionError(f"exit {done.returncode}, wanted {expect}: {done.stderr}")
    rows = {}
    for line in done.stdout.splitlines():
        parts = line.strip().split("  ", 1)
        if len(parts) == 2 and line.startswith("  ") and not line.startswith("   "):
            rows.setdefault(parts[0], parts[1].strip())
    return rows


class LikeWithLike(unittest.TestCase):
    """Issue 47 item 3: the model line prices exactly what the collective time measures, or
    says why it does not; the bounds say which is tighter; a stalled run shows no bandwidth."""
    STAR = ["--topology", "star:4", "--algorithm", "ring"]
    ALPHA, B = 2e-6, 10e9  # the star generator: two 1 us links, 10 GB/s

    def ring(self, p, elements):
        """Ring allreduce of whole float32 elements: each step paced by the largest chunk."""
        return 2 * (p - 1) * (self.ALPHA + -(-elements // p) * 4 / self.B)

    def test_buckets_are_modelled_one_after_the_other(self):
        # 4 layers of 16 KiB, buckets of 16 KiB: 4 allreduces of 4096 elements, one at a time
        rows = summary_rows(*self.STAR, "--set", "training.layers.uniform.count=4",
                            "--set", "training.layers.uniform.parameters=16384", "--set", "training.layers.uniform.forward=1us",
                            "--set", "training.layers.uniform.backward=2us", "--set", "training.bucket=16KiB")
        model = 4 * self.ring(4, 4096)
        self.assertEqual(rows["model time"], f"{model * 1e6:.6g} us (its 4 bucket allreduces' models added up; "
                                             "collective/model = 1.000000)")

    def test_a_single_collective_still_compares(self):
        rows = summary_rows(*self.STAR, "--size", "1MiB")
        self.assertEqual(rows["model time"], f"{self.ring(4, 262144) * 1e6:.6g} us (simulated/model = 1.000000)")

    def test_sharded_training_is_not_compared(self):
        rows = summary_rows(*self.STAR, "--set", "training.layers.uniform.count=4",
                            "--set", "training.layers.uniform.parameters=16384", "--set", "training.layers.uniform.forward=1us",
                            "--set", "training.layers.uniform.backward=2us", "--set", "training.bucket=16KiB",
                            "--set", "training.sharding=zero3")
        self.assertRegex(rows["model time"], r"fault-free; not compared: zero3 runs each bucket's reduce-scatter and "
                                             r"all-gather apart")
        self.assertNotIn("/model =", rows["model time"])
        self.assertTrue(rows["efficiency"].startswith("not given: zero3"), rows["efficiency"])

    def test_a_run_with_a_fault_in_its_measured_rounds_is_not_compared(self):
        rows = summary_rows(*self.STAR, "--size", "1MiB", "--rounds", "3",
                            "--set", 'faults=[{"kind": "slow-link", "rank": 1, "at": "0s", "factor": 0.25}]')
        self.assertEqual(rows["model time"], f"{self.ring(4, 262144) * 1e6:.6g} us (fault-free; not compared: the "
                                             "rounds measured include a fault, where the model is the fault-free collective)")
        self.assertTrue(rows["efficiency"].startswith("not given: the rounds measured include a fault"))

    def test_a_stalled_run_shows_no_bandwidth(self):
        rows = summary_rows(*self.STAR, "--size", "1MiB", "--rounds", "2",
                            "--set", 'faults=[{"kind": "link-down", "rank": 1, "at": "0s"}]', expect=1)
        self.assertEqual(rows["algbw"], "not given: the run stalled")
        self.assertEqual(rows["busbw"], "not given: the run stalled")
        self.assertEqual(rows["model time"], f"{self.ring(4, 262144) * 1e6:.6g} us (fault-free; not compared: the "
                                             "run stalled before it completed a round)")

    def test_a_fault_given_at_a_round_strikes_that_round_on(self):
        # from round 2 host-2's NIC at 1%; the first group's rounds 0 and 1 are fault-free, though
        # the fault is applied when the first worker starts round 2, while the last ends round 1
        path = str(REPO / "scenarios" / "faults" / "slow-link-3-rebuild.json")
        ring3 = 2 * 2 * (2e-6 + -(-(64 * 1024 * 1024 // 4) // 3) * 4 / 10e9)
        rows = summary_rows(path)
        self.assertEqual(rows["model time"], f"{ring3 * 1e3:.6g} ms (collective/model = 1.000000)")
        # under "wait" no group is rebuilt: rounds 2 to 4 are measured too, and struck
        rows = summary_rows(path.replace("rebuild", "wait"))
        self.assertRegex(rows["model time"], r"not compared: the rounds measured include a fault")

    def test_a_run_that_stalls_after_fault_free_rounds_compares_them(self):
        # preempt-8-wait: round 0 completes, host-5 is preempted in round 1 and the group waits forever
        rows = summary_rows(str(REPO / "scenarios" / "faults" / "preempt-8-wait.json"), expect=1)
        ring8 = 2 * 7 * (2e-6 + 16 * 1024 * 1024 / 8 / 10e9)
        self.assertEqual(rows["model time"], f"{ring8 * 1e3:.6g} ms (collective/model = 1.000000)")
        self.assertEqual(rows["busbw"], "not given: the run stalled")

    def test_model_says_which_bound_is_tighter(self):
        # star:8, 64 MiB: the ranks' links need 2(p-1)/p n/B (the lower bound); the tightest
        # cut, rank 0 against the rest, n/B only: the lower bound holds
        done = subprocess.run([COLLSIM, "model", "--topology", "star:8", "--workers", "8", "--size", "64MiB",
                               "--algorithm", "ring"], capture_output=True, text=True, timeout=60)
        rows = {line[:16].strip(): line[16:].strip() for line in done.stdout.splitlines() if line.startswith("  ")}
        lower = rows["lower bound"].split(" (")[0]
        self.assertEqual(lower, f"{2 * 7 / 8 * N / 10e9 * 1e3:.6g} ms")
        self.assertEqual(rows["topology bound"], f"{lower} = the lower bound, the tighter: the platform's tightest "
                                                 f"cut, rank 0 -> ranks 1-7 (64 MiB across 10 GB/s), takes only "
                                                 f"{N / 10e9 * 1e3:.6g} ms")
        # two racks: the inter-rack link is tighter than the hosts' links
        done = subprocess.run([COLLSIM, "model", "--topology", TWO_RACKS, "--workers", "16", "--size", "64MiB",
                               "--algorithm", "ring"], capture_output=True, text=True, timeout=60)
        rows = {line[:16].strip(): line[16:].strip() for line in done.stdout.splitlines() if line.startswith("  ")}
        self.assertEqual(rows["topology bound"], f"{N / SLOW * 1e3:.6g} ms (tighter than the lower bound: the cut "
                                                 "ranks 0-7 -> ranks 8-15 (bisection) must carry 64 MiB across 1.25 GB/s)")

    def test_model_says_where_its_routes_come_from(self):
        # a generated family: routes from its structure, no `routes` row; the same figures as
        # the platform file describing the same star (star-8.xml: 8 hosts, 10 GBps, 1 us links)
        def model(topology):
            done = subprocess.run([COLLSIM, "model", "--topology", topology, "--workers", "8", "--size", "64MiB",
                                   "--algorithm", "ring"], capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            return {line[:16].strip(): line[16:].strip() for line in done.stdout.splitlines() if line.startswith("  ")}
        generated, file = model("star:8:10GBps:1us"), model(str(REPO / "topologies" / "star-8.xml"))
        self.assertNotIn("routes", generated)
        self.assertEqual(file["routes"], "read pair by pair from the platform built in SimGrid (a platform file has no "
                                         "generator's structure); computed from the generator's structure, without "
                                         "building the platform, only for star, rack, nodes, leaf-spine, rail, the GPU "
                                         "presets and fat-tree (faster at large p)")
        for row in ("lower bound", "topology bound"):
            self.assertEqual(generated[row], file[row])
        # a torus keeps SimGrid's routing and says so
        self.assertIn("a torus", model("torus:2x4")["routes"])


if __name__ == "__main__":
    unittest.main()
