"""Every ready scenario in scenarios/ runs, verifies, and (where the platform allows a
hand calculation) takes the time worked out here from the links' alpha and B.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_scenarios -v   (from tests/cli)
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
MiB = 1024 * 1024
LINK_LAT, LINK_BW = 1e-6, 10e9          # star-8, star-64, two-racks inside a rack
ALPHA = 2 * LINK_LAT                    # a route crosses two private links
CROSS_ALPHA, CROSS_BW = 12e-6, 1.25e9   # two-racks: 1us + 10us + 1us, 1.25 GB/s bottleneck


def run(scenario, *extra, expect=0):
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        done = subprocess.run([COLLSIM, "run", str(scenario), "--quiet", "--trace", str(trace), *extra], cwd=REPO,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != expect:
            raise AssertionError(f"{scenario}: exit {done.returncode}: {done.stderr}")
        return json.loads(trace.read_text())


def stalls(document):
    """A scenario whose group must stall: a preemption and nobody to rebuild the group."""
    waits = document.get("recovery", {}).get("policy", "none") == "none"
    return waits and any(f["kind"] == "preempt" for f in document.get("faults", []))


class ReadyScenarios(unittest.TestCase):
    def test_every_scenario_runs_and_verifies(self):
        scenarios = sorted(p for p in (REPO / "scenarios").rglob("*.json") if p.parent.name != "sweeps")
        self.assertGreaterEqual(len(scenarios), 20)
        for scenario in scenarios:
            with self.subTest(scenario=str(scenario.relative_to(REPO))):
                document = json.loads(scenario.read_text())
                self.assertIn("description", document, "each scenario says what it shows")
                if stalls(document):
                    summary = run(scenario, expect=1)["summary"]
                    self.assertIn("stalled", summary)
                    self.assertLess(summary["rounds_completed"], document["training"]["rounds"])
                    continue
                summary = run(scenario)["summary"]
                self.assertTrue(summary["verified"])
                self.assertTrue(summary["models_identical"])

    def test_quickstart_ring_time(self):
        p, n = 8, 64 * MiB
        summary = run(REPO / "scenarios/quickstart.json")["summary"]
        self.assertAlmostEqual(summary["collective_time"] / (2 * (p - 1) * (ALPHA + n / p / LINK_BW)), 1, places=9)

    def test_naive_is_p_times_slower_in_bandwidth(self):
        p, n = 8, 64 * MiB
        summary = run(REPO / "scenarios/ring-vs-naive-8.json", "--set", "collective.algorithm=naive")["summary"]
        self.assertAlmostEqual(summary["collective_time"] / (2 * (ALPHA + (p - 1) * n / LINK_BW)), 1, places=9)

    def test_pipeline_broadcast_time(self):
        p, n, segment = 16, 64 * MiB, MiB
        k = n // segment
        summary = run(REPO / "scenarios/pipeline-broadcast-16.json")["summary"]
        want = (p - 1 + k - 1) * (ALPHA + segment / LINK_BW)
        self.assertAlmostEqual(summary["collective_time"] / want, 1, places=9)

    def test_binomial_broadcast_crosses_racks_once(self):
        # Round 0 sends rank 0 -> 8 across the slow link; rounds 1-3 stay inside each rack.
        n = MiB
        summary = run(REPO / "scenarios/broadcast-two-racks.json")["summary"]
        want = (CROSS_ALPHA + n / CROSS_BW) + 3 * (ALPHA + n / LINK_BW)
        self.assertAlmostEqual(summary["collective_time"] / want, 1, places=9)

    def test_hierarchical_over_two_zones(self):
        # 7 ring steps each way inside a rack (n/8), 1 across, where 8 rings share the
        # inter-rack link (n/16 each at CROSS_BW / 8)
        p, n = 16, 64 * MiB
        summary = run(REPO / "scenarios/hierarchical-16.json")["summary"]
        want = 2 * 7 * (ALPHA + n / 8 / LINK_BW) + 2 * (CROSS_ALPHA + n / 16 / (CROSS_BW / 8))
        self.assertAlmostEqual(summary["collective_time"] / want, 1, places=9)
        ring = run(REPO / "scenarios/hierarchical-16.json", "--set", "collective.algorithm=ring")["summary"]
        self.assertAlmostEqual(ring["collective_time"] / (2 * (p - 1) * (CROSS_ALPHA + n / p / CROSS_BW)), 1, places=9)

    def test_parameter_server_time(self):
        p, n = 8, 64 * MiB
        for servers in (2, 8):
            with self.subTest(servers=servers):
                summary = run(REPO / "scenarios/parameter-server-8.json", "--set",
                              f"collective.servers={servers}")["summary"]
                want = 2 * (ALPHA + (p - 1) * n / servers / LINK_BW)
                self.assertAlmostEqual(summary["collective_time"] / want, 1, places=9)

    def test_realistic_tcp_is_slower_than_ideal(self):
        realistic = run(REPO / "scenarios/reduce-64-realistic.json")["summary"]["collective_time"]
        ideal = run(REPO / "scenarios/reduce-64-realistic.json", "--network", "ideal")["summary"]["collective_time"]
        self.assertGreater(realistic, ideal)
        # ideal binomial reduce: ceil(log2 64) = 6 rounds of alpha + n/B
        self.assertAlmostEqual(ideal / (6 * (ALPHA + 4 * MiB / LINK_BW)), 1, places=9)

    def test_platform_file_without_workers_uses_each_host_once(self):
        with tempfile.TemporaryDirectory() as folder:
            trace = Path(folder) / "t.json"
            subprocess.run([COLLSIM, "run", "--topology", "topologies/two-racks.xml", "--size", "4KiB", "--quiet",
                            "--trace", str(trace)], cwd=REPO, check=True)
            platform = json.loads(trace.read_text())["platform"]
        self.assertEqual(platform["hosts"], 16)
        self.assertEqual(platform["rank_hosts"], [f"host-{i}" for i in range(16)])

    def test_generated_star_places_ranks_in_host_number_order(self):
        with tempfile.TemporaryDirectory() as folder:
            trace = Path(folder) / "t.json"
            subprocess.run([COLLSIM, "run", "--topology", "star:12", "--size", "4KiB", "--quiet", "--trace", str(trace)],
                           cwd=REPO, check=True)
            platform = json.loads(trace.read_text())["platform"]
        self.assertEqual(platform["rank_hosts"], [f"host-{i}" for i in range(12)])

    def test_same_scenario_same_times_to_the_last_digit(self):
        first = run(REPO / "scenarios/broadcast-two-racks.json")
        second = run(REPO / "scenarios/broadcast-two-racks.json")
        self.assertEqual(first["summary"], second["summary"])
        self.assertEqual(first["messages"], second["messages"])


if __name__ == "__main__":
    unittest.main()
