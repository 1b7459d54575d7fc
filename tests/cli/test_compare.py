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


if __name__ == "__main__":
    unittest.main()
