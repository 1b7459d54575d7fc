"""collsim compare as CI meets it: hand-made baseline and current folders, exit codes,
the three output formats.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_compare -v   (from tests/cli)
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))


def baseline(identity, time):
    return {"format": "collsim-baseline/1", "identity": identity,
            "metrics": {"simulated_time": time, "verified": True, "busbw": 1e9}}


class Compare(unittest.TestCase):
    def setUp(self):
        temporary = tempfile.TemporaryDirectory()
        self.addCleanup(temporary.cleanup)
        self.tmp = Path(temporary.name)

    def folder(self, name, entries):
        path = self.tmp / name
        path.mkdir()
        for identity, time in entries.items():
            (path / f"{identity}.json").write_text(json.dumps(baseline(identity, time)))
        return path

    def compare(self, *args):
        return subprocess.run([COLLSIM, "compare", *map(str, args)], capture_output=True, text=True, timeout=30)

    def test_identical_folders_pass(self):
        done = self.compare(self.folder("a", {"x": 1.0, "y": 2.0}), self.folder("b", {"x": 1.0, "y": 2.0}))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("0 regression(s), 0 improvement(s), 0 missing, 0 new; 2 entries compared", done.stdout)

    def test_regression_and_missing_fail_with_a_table(self):
        done = self.compare(self.folder("a", {"x": 1.0, "y": 2.0}), self.folder("b", {"x": 1.01, "z": 1.0}))
        self.assertEqual(done.returncode, 1)
        self.assertRegex(done.stdout, r"regression\s+x\s+simulated_time\s+1 s\s+1.01 s\s+\+1.000%")
        self.assertRegex(done.stdout, r"(?m)^missing\s+y$")
        self.assertRegex(done.stdout, r"(?m)^new\s+z$")

    def test_a_wider_tolerance_accepts_the_change(self):
        done = self.compare(self.folder("a", {"x": 1.0}), self.folder("b", {"x": 1.01}), "--tolerance", "2%")
        self.assertEqual(done.returncode, 0)

    def test_json_and_markdown(self):
        a, b = self.folder("a", {"x": 1.0}), self.folder("b", {"x": 0.5})
        report = json.loads(self.compare(a, b, "--format", "json").stdout)
        self.assertEqual(report["summary"]["improvements"], 1)
        self.assertEqual(report["changes"][0]["relative_change"], -0.5)
        markdown = self.compare(a, b, "--format", "markdown").stdout
        self.assertIn("| improvement | x | simulated_time | 1 s | 500 ms | -50.000% |", markdown)

    def test_a_trace_compares_with_a_baseline_of_the_same_scenario(self):
        trace = self.tmp / "trace.json"
        subprocess.run([COLLSIM, "run", str(REPO / "scenarios/quickstart.json"), "--quiet", "--trace", str(trace)],
                       check=True, timeout=60)
        done = self.compare(REPO / "tests/baselines/quickstart.json", trace, "--tolerance", "0")
        self.assertEqual(done.returncode, 0, done.stdout)

    def test_two_runs_of_one_identity_are_refused_naming_both_files(self):
        a = self.folder("a", {"x": 1.0})
        (a / "copy.json").write_text(json.dumps(baseline("x", 1.0)))
        done = self.compare(a, self.folder("b", {"x": 1.0}))
        self.assertEqual(done.returncode, 2)
        self.assertRegex(done.stderr, r"^collsim: error: .*'x' appears twice \(in .*copy\.json and in .*x\.json\)")

    def test_bad_input(self):
        done = self.compare(self.tmp / "nothing", self.tmp)
        self.assertEqual(done.returncode, 2)
        self.assertRegex(done.stderr, r"^collsim: error: BASELINE: '.*nothing' does not exist\n$")
        (self.tmp / "broken.json").write_text("{")
        done = self.compare(self.tmp / "broken.json", self.tmp / "broken.json")
        self.assertEqual(done.returncode, 2)
        self.assertIn("malformed JSON", done.stderr)
        done = self.compare(self.folder("a", {"x": 1.0}), self.folder("b", {"x": 1.0}), "--format", "html")
        self.assertEqual(done.returncode, 2)

    def test_scaling_efficiency_is_compared_as_computed_by_hand(self):
        # Rounds of 10 ms compute then a ring allreduce of n = 16 MiB on an ideal star (alpha 2 us,
        # B 10 GB/s): the ring takes 2(p-1)(alpha + n/(pB)), so scaling_efficiency = C / (C + ring),
        # higher is better: 4 workers against 8 is a regression of e8/e4 - 1
        alpha, bandwidth, n, compute = 2e-6, 10e9, 16 * 2**20, 0.010
        scenario = {"name": "scaling", "topology": "star:8", "network": "ideal", "workers": 4,
                    "collective": {"algorithm": "ring", "size": "16MiB"},
                    "training": {"rounds": 2, "compute": "10ms", "batch": 32}}
        path = self.tmp / "scaling.json"
        path.write_text(json.dumps(scenario))
        efficiency = {}
        for p in (4, 8):
            trace = self.tmp / f"trace-{p}.json"
            subprocess.run([COLLSIM, "run", str(path), "--quiet", "--set", f"workers={p}", "--trace", str(trace)],
                           check=True, timeout=60)
            efficiency[p] = compute / (compute + 2 * (p - 1) * (alpha + n / (p * bandwidth)))
            self.assertAlmostEqual(json.loads(trace.read_text())["summary"]["scaling_efficiency"], efficiency[p],
                                   delta=1e-12)
        report = json.loads(self.compare(self.tmp / "trace-4.json", self.tmp / "trace-8.json", "--format", "json").stdout)
        [change] = [c for c in report["changes"] if c["metric"] == "scaling_efficiency"]
        self.assertEqual(change["status"], "regression")
        self.assertAlmostEqual(change["baseline"], efficiency[4], delta=1e-12)
        self.assertAlmostEqual(change["current"], efficiency[8], delta=1e-12)
        self.assertAlmostEqual(change["relative_change"], efficiency[8] / efficiency[4] - 1, delta=1e-12)
        # the other way round it improves; within a tolerance above the change it is not listed
        report = json.loads(self.compare(self.tmp / "trace-8.json", self.tmp / "trace-4.json", "--format", "json").stdout)
        [change] = [c for c in report["changes"] if c["metric"] == "scaling_efficiency"]
        self.assertEqual(change["status"], "improvement")
        self.assertAlmostEqual(change["relative_change"], efficiency[4] / efficiency[8] - 1, delta=1e-12)
        report = json.loads(self.compare(self.tmp / "trace-4.json", self.tmp / "trace-8.json", "--format", "json",
                                         "--tolerance", "scaling_efficiency=4%").stdout)
        self.assertFalse([c for c in report["changes"] if c["metric"] == "scaling_efficiency"])


if __name__ == "__main__":
    unittest.main()
