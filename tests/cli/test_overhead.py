"""The per-message overhead o (LogP): a rank spends o before each message leaves, so the
messages it posts leave one after another. Checked against formulas written out here.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_overhead -v   (from tests/cli)
"""
import subprocess
import unittest

from cli_common import COLLSIM, traced_run

ALPHA, B, O = 2e-6, 10e9, 1e-6   # star:P: two 1 us links per route, 10 GB/s; o = 1 us


summary_of = traced_run  # the run's trace: its summary, scenario, ...


class Overhead(unittest.TestCase):
    def assertClose(self, expected, actual, rel=1e-6):
        self.assertLessEqual(abs(actual - expected), rel * expected, f"{actual} != {expected}")

    def test_a_fan_out_pays_one_overhead_per_message_when_they_are_small(self):
        p, n = 8, 4
        for collective, algorithm in (("broadcast", "flat"), ("allreduce", "direct")):
            t = summary_of("--collective", collective, "--algorithm", algorithm, "--topology", f"star:{p}",
                           "--size", str(n), "--overhead", "1us")
            # the 7th message leaves after 7 overheads, then crosses: 7 o + alpha + n/B
            self.assertClose((p - 1) * O + ALPHA + n / B, t["summary"]["collective_time"])

    def test_a_fan_out_of_large_messages_is_paced_by_the_link(self):
        p, n = 8, 1024 * 1024
        t = summary_of("--collective", "broadcast", "--algorithm", "flat", "--topology", f"star:{p}", "--size", "1MiB",
                       "--overhead", "1us")
        # the root's link never idles after the first overhead: o + alpha + (p-1) n/B
        self.assertClose(O + ALPHA + (p - 1) * n / B, t["summary"]["collective_time"])

    def test_ring_pays_one_overhead_per_step(self):
        p, n = 8, 1024 * 1024
        t = summary_of("--algorithm", "ring", "--topology", f"star:{p}", "--size", "1MiB", "--overhead", "1us")
        self.assertClose(2 * (p - 1) * (O + ALPHA + n / p / B), t["summary"]["collective_time"])
        self.assertEqual(1e-6, t["scenario"]["message_overhead"])

    def test_every_formula_counts_the_overhead(self):
        # exact for one message per rank and step (p = 8, sizes that divide evenly); the
        # tree allreduces' ranks skip steps, so their formulas are upper bounds
        exact = {"allreduce": ["naive", "naive-binomial", "ring", "recursive-doubling", "rabenseifner", "direct"],
                 "broadcast": ["binomial", "flat", "pipeline", "scatter-allgather"], "reduce": ["binomial", "flat"],
                 "reduce-scatter": ["ring", "recursive-halving"], "allgather": ["ring", "recursive-doubling"]}
        for collective, algorithms in exact.items():
            for algorithm in algorithms:
                with self.subTest(collective=collective, algorithm=algorithm):
                    segment = ["--set", "collective.segment=256KiB"] if algorithm == "pipeline" else []
                    t = summary_of("--collective", collective, "--algorithm", algorithm, "--topology", "star:8",
                                   "--size", "1MiB", "--overhead", "1us", *segment)
                    s = t["summary"]
                    self.assertClose(s["model_time"], s["collective_time"])
        for algorithm in ("binary-tree", "double-binary-tree"):
            for p in (7, 8):
                with self.subTest(algorithm=algorithm, p=p):
                    s = summary_of("--algorithm", algorithm, "--topology", f"star:{p}", "--size", "4",
                                   "--overhead", "1us")["summary"]
                    self.assertLessEqual(s["collective_time"], s["model_time"] * (1 + 1e-9))
                    self.assertGreater(s["collective_time"], 0.9 * s["model_time"])

    def test_negative_overhead_is_refused(self):
        done = subprocess.run([COLLSIM, "run", "--overhead", "-1us"], capture_output=True, text=True, timeout=60)
        self.assertEqual(2, done.returncode)
        self.assertEqual(1, len(done.stderr.strip().splitlines()))
        self.assertIn("message_overhead", done.stderr)


if __name__ == "__main__":
    unittest.main()
