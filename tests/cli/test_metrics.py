"""The metric table (src/run/metrics.cpp) is the one list: `collsim list metrics` prints
it, baselines and sweep tables carry its metrics, compare compares the ones that have a
direction, and the docs' lists say the same.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_metrics
"""
import csv
import json
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, REPO


def metric_table():
    """[(name, unit, better)] from `collsim list metrics`, in table order."""
    out = subprocess.run([COLLSIM, "list", "metrics"], capture_output=True, text=True, timeout=30, check=True).stdout
    rows = [line.split()[:3] for line in out.splitlines()[1:] if line.strip()]
    return [(name, unit, better) for name, unit, better in rows]


def names_in(markdown_cell):
    return re.findall(r"`([a-z0-9_]+)`", markdown_cell)


class MetricTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = metric_table()
        cls.names = [name for name, _, _ in cls.table]
        cls.compared = {name: better for name, _, better in cls.table if better != "informational"}

    def test_each_metric_once_with_a_unit_and_a_direction(self):
        self.assertEqual(len(self.names), len(set(self.names)))
        for name, unit, better in self.table:
            with self.subTest(metric=name):
                self.assertIn(unit, {"seconds", "bytes/s", "count", "ratio", "flag"})
                self.assertIn(better, {"lower", "higher", "informational"})
        # the timings are lower-is-better, the bandwidths higher: the directions CI relies on
        self.assertEqual(self.compared["simulated_time"], "lower")
        self.assertEqual(self.compared["busbw"], "higher")

    def test_docs_ci_lists_the_compared_metrics_with_their_direction(self):
        text = (REPO / "docs" / "ci.md").read_text()
        row = re.search(r"\| lower is better \| higher is better \|\n\s*\|---\|---\|\n\s*\|([^|]*)\|([^|]*)\|", text)
        self.assertIsNotNone(row, "docs/ci.md: the table of compared metrics is missing")
        documented = {name: "lower" for name in names_in(row.group(1))}
        documented.update({name: "higher" for name in names_in(row.group(2))})
        self.assertEqual(documented, self.compared)

    def test_docs_sweeps_lists_the_columns_in_table_order(self):
        text = (REPO / "docs" / "sweeps.md").read_text()
        paragraph = text[text.index("## The results table"):text.index("`wall_time`")]
        listed = [name for name in names_in(paragraph) if name in self.names]
        self.assertEqual(listed, [name for name in self.names if name != "time_lost"])

    def test_a_sweep_table_has_one_column_per_metric(self):
        with tempfile.TemporaryDirectory(prefix="collsim-metrics-") as folder:
            sweep = Path(folder) / "s.json"
            sweep.write_text(json.dumps({"name": "m", "base": {"workers": 2, "collective": {"size": "1KiB"}},
                                         "axes": {"collective.algorithm": ["ring", "naive"]}}))
            out = Path(folder) / "r.csv"
            run = subprocess.run([COLLSIM, "sweep", str(sweep), "--out", str(out), "--quiet"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            with out.open() as table:
                header = next(csv.reader(table))
        metrics = [column for column in header if column in self.names]
        self.assertEqual(metrics, [name for name in self.names if name != "time_lost"])

    def test_a_baseline_holds_exactly_the_compared_metrics(self):
        with tempfile.TemporaryDirectory(prefix="collsim-metrics-") as folder:
            scenarios = Path(folder) / "scenarios"
            scenarios.mkdir()
            # a batch gives the iteration metrics too: every compared metric but time_lost
            (scenarios / "two.json").write_text(json.dumps({"name": "two", "workers": 2, "training": {"batch": 8}}))
            run = subprocess.run([COLLSIM, "baseline", "update", "--scenarios", str(scenarios),
                                  "--out", str(Path(folder) / "out"), "--quiet"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            baseline = json.loads((Path(folder) / "out" / "two.json").read_text())
            # named from the scenarios folder's parent, with or without a trailing slash
            self.assertEqual(baseline["scenario_file"], "scenarios/two.json")
            run = subprocess.run([COLLSIM, "baseline", "update", "--scenarios", str(scenarios) + "/",
                                  "--out", str(Path(folder) / "again"), "--quiet"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            again = json.loads((Path(folder) / "again" / "two.json").read_text())
            self.assertEqual(again["scenario_file"], "scenarios/two.json")
        # without faults there is no recovery to judge: every compared metric but
        # time_lost (only with --baseline), healthy_dropped (only with faults),
        # memory_per_worker (only with training.layers) and scaling_efficiency (only with a
        # compute time: one worker alone takes none here)
        self.assertEqual(set(baseline["metrics"]),
                         set(self.compared) - {"time_lost", "healthy_dropped", "memory_per_worker",
                                               "scaling_efficiency"})

    def test_a_fault_scenario_has_healthy_dropped_in_its_baseline_and_trace(self):
        committed = json.loads((REPO / "tests" / "baselines" / "faults" / "preempt-8-rebuild.json").read_text())
        self.assertEqual(committed["metrics"]["healthy_dropped"], 0)
        with tempfile.TemporaryDirectory(prefix="collsim-metrics-") as folder:
            trace = Path(folder) / "t.json"
            run = subprocess.run([COLLSIM, "run", str(REPO / "scenarios" / "faults" / "preempt-8-rebuild.json"),
                                  "--trace", str(trace), "--quiet"], capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            summary = json.loads(trace.read_text())["summary"]
        self.assertEqual(summary["healthy_dropped"], len(summary["recovery_quality"]["healthy_dropped"]))

    def test_compare_names_the_compared_metrics_for_an_unknown_tolerance(self):
        run = subprocess.run([COLLSIM, "compare", str(REPO / "tests" / "baselines"), str(REPO / "tests" / "baselines"),
                              "--tolerance", "lower_bound=1%"], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 2)
        allowed = run.stderr.split("allowed:")[1]
        # and a parallel trace's own (docs/ci.md): comm_time.NAME, exposed_time.NAME per communicator
        parallel = {"step_time", "tokens_per_second", "mfu", "bubble_fraction", "comm_time", "exposed_time"}
        self.assertEqual(set(re.findall(r"[a-z][a-z0-9_]*", allowed)), set(self.compared) | parallel)


if __name__ == "__main__":
    unittest.main()
