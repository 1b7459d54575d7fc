"""--algorithm auto: ranks every algorithm of the collective by its cost formula on the
platform's alpha and B, runs the best, and records the table in the trace.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_auto -v   (from tests/cli)
"""
import subprocess
import unittest

from cli_common import COLLSIM, REPO, traced_run

ALPHA, B, P = 2e-6, 10e9, 64


def auto_run(size, *extra):
    return traced_run("--algorithm", "auto", "--workers", P, "--topology", f"star:{P}", "--size", size, *extra)


trace_of = traced_run


class Auto(unittest.TestCase):
    def test_tiny_messages_pick_a_few_step_algorithm(self):
        trace = auto_run(4)
        table = {c["algorithm"]: c["model_time"] for c in trace["auto"]["candidates"]}
        # ring needs 2(p-1) = 126 latencies; the choice needs at most log2 p = 6
        self.assertNotEqual(trace["auto"]["chosen"], "ring")
        self.assertLessEqual(table[trace["auto"]["chosen"]], 6 * ALPHA + 1e-9)
        # one 4-byte element: ring's largest chunk is that element
        self.assertAlmostEqual(table["ring"], 2 * (P - 1) * (ALPHA + 4 / B), delta=1e-12)
        self.assertEqual(trace["summary"]["model_time"], min(table.values()))
        self.assertEqual(trace["scenario"]["collective"]["algorithm"], "auto")

    def test_with_a_per_message_overhead_tiny_messages_pick_a_log_latency_algorithm(self):
        # o = 1 us per message: direct's 63 messages leave one after another (63 o + alpha),
        # recursive doubling sends log2 p = 6, one per step: 6 (o + alpha)
        o = 1e-6
        trace = auto_run(4, "--overhead", "1us")
        table = {c["algorithm"]: c["model_time"] for c in trace["auto"]["candidates"]}
        self.assertEqual("recursive-doubling", trace["auto"]["chosen"])
        self.assertAlmostEqual(table["recursive-doubling"], 6 * (o + ALPHA + 4 / B), delta=1e-12)
        self.assertAlmostEqual(table["direct"], (P - 1) * o + ALPHA + 4 / B, delta=1e-12)
        self.assertAlmostEqual(trace["summary"]["collective_time"], table["recursive-doubling"], delta=1e-12)

    def test_with_a_per_message_overhead_large_messages_pick_a_bandwidth_optimal_algorithm(self):
        n = 64 * 1024 * 1024
        trace = auto_run("64MiB", "--overhead", "1us")
        self.assertIn(trace["auto"]["chosen"], ("ring", "rabenseifner"))
        self.assertLess(trace["summary"]["collective_time"], 1.02 * 2 * (P - 1) / P * n / B)

    def test_large_messages_pick_a_bandwidth_optimal_algorithm(self):
        n = 64 * 1024 * 1024
        trace = auto_run("64MiB")
        self.assertIn(trace["auto"]["chosen"], ("ring", "rabenseifner"))
        chosen = min(c["model_time"] for c in trace["auto"]["candidates"])
        # within 2% of the bandwidth bound 2(p-1)/p n/B
        self.assertLess(chosen, 1.02 * 2 * (P - 1) / P * n / B)
        self.assertAlmostEqual(trace["summary"]["collective_time"], chosen, delta=chosen * 1e-9)


class AutoBySimulation(unittest.TestCase):
    def test_on_an_ideal_star_every_trial_equals_its_formula(self):
        trace = trace_of("--algorithm", "auto", "--auto", "simulate", "--workers", "16", "--topology", "star:16",
                         "--size", "1MiB")
        self.assertEqual("simulate", trace["auto"]["by"])
        rows = trace["auto"]["candidates"]
        self.assertGreaterEqual(len(rows), 8)
        for row in rows:
            self.assertAlmostEqual(row["simulated_time"], row["model_time"], delta=row["model_time"] * 1e-6,
                                   msg=row["algorithm"])
        times = [row["simulated_time"] for row in rows]
        self.assertEqual(sorted(times), times)
        self.assertEqual(rows[0]["algorithm"], trace["auto"]["chosen"])

    def test_contention_on_two_racks_overrules_the_formulas(self):
        racks = str(REPO / "topologies" / "two-racks.xml")
        args = ["--workers", "16", "--topology", racks, "--size", "64MiB", "--network", "realistic"]
        trace = trace_of("--algorithm", "auto", "--auto", "simulate", *args)
        rows = {row["algorithm"]: row for row in trace["auto"]["candidates"]}
        by_model = min(rows.values(), key=lambda row: row["model_time"])["algorithm"]
        chosen = trace["auto"]["chosen"]
        # Rabenseifner's formula wins, but its halving steps pair rack A with rack B and
        # squeeze 8 flows through the inter-rack link; the trials see it.
        self.assertEqual("rabenseifner", by_model)
        self.assertNotEqual(by_model, chosen)
        self.assertGreater(rows[by_model]["simulated_time"], 2 * rows[chosen]["simulated_time"])
        # a trial is the same simulation as running that algorithm on its own
        for name in (chosen, by_model):
            alone = trace_of("--algorithm", name, *args)
            self.assertEqual(alone["summary"]["collective_time"], rows[name]["simulated_time"], name)
        self.assertEqual(rows[chosen]["simulated_time"], trace["summary"]["collective_time"])

    def test_a_bad_way_to_choose_is_refused(self):
        done = subprocess.run([COLLSIM, "run", "--algorithm", "auto", "--auto", "guess"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(2, done.returncode)
        self.assertEqual(1, len(done.stderr.strip().splitlines()))
        self.assertIn("collective.auto", done.stderr)
        self.assertIn("model, simulate", done.stderr)


if __name__ == "__main__":
    unittest.main()
