"""--algorithm auto: ranks every algorithm of the collective by its cost formula on the
platform's alpha and B, runs the best, and records the table in the trace.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_auto -v   (from tests/cli)
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
ALPHA, B, P = 2e-6, 10e9, 64


def auto_run(size):
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.json"
        subprocess.run([COLLSIM, "run", "--algorithm", "auto", "--workers", str(P), "--topology", f"star:{P}",
                        "--size", str(size), "--quiet", "--trace", str(trace)], check=True, timeout=120)
        return json.loads(trace.read_text())


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

    def test_large_messages_pick_a_bandwidth_optimal_algorithm(self):
        n = 64 * 1024 * 1024
        trace = auto_run("64MiB")
        self.assertIn(trace["auto"]["chosen"], ("ring", "rabenseifner"))
        chosen = min(c["model_time"] for c in trace["auto"]["candidates"])
        # within 2% of the bandwidth bound 2(p-1)/p n/B
        self.assertLess(chosen, 1.02 * 2 * (P - 1) / P * n / B)
        self.assertAlmostEqual(trace["summary"]["collective_time"], chosen, delta=chosen * 1e-9)


if __name__ == "__main__":
    unittest.main()
