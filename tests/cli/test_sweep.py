"""collsim sweep as a user meets it: values checked against formulas worked out here,
resume, a failing point, shards merged back into the full sweep.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_sweep -v   (from tests/cli)
"""
import csv
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
ALPHA, B = 2e-6, 10e9
SIZE = 1024 * 1024

SWEEP = {"name": "test", "base": {"topology": "star:16", "collective": {"size": "1MiB"}},
         "axes": {"collective.algorithm": ["ring", "naive"], "workers": {"from": 2, "to": 16, "times": 2}}}
SVG = "{http://www.w3.org/2000/svg}"


def formula(algorithm, p):
    if algorithm == "ring":
        return 2 * (p - 1) * (ALPHA + SIZE / p / B)
    return 2 * (ALPHA + (p - 1) * SIZE / B)


class Sweep(unittest.TestCase):
    def setUp(self):
        temporary = tempfile.TemporaryDirectory()
        self.addCleanup(temporary.cleanup)
        self.tmp = Path(temporary.name)

    def sweep(self, document, *args, expect=0):
        path = self.tmp / "sweep.json"
        path.write_text(json.dumps(document))
        done = subprocess.run([COLLSIM, "sweep", str(path), *map(str, args)], capture_output=True, text=True,
                              timeout=120, cwd=self.tmp)
        self.assertEqual(done.returncode, expect, done.stderr)
        return done

    @staticmethod
    def rows(path):
        with open(path) as f:
            return list(csv.DictReader(f))

    def test_csv_values_match_the_formulas(self):
        self.sweep(SWEEP, "--out", self.tmp / "r.csv", "--jobs", "2")
        rows = self.rows(self.tmp / "r.csv")
        self.assertEqual([(r["collective.algorithm"], int(r["workers"])) for r in rows],
                         [(a, p) for a in ("ring", "naive") for p in (2, 4, 8, 16)])
        for r in rows:
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["verified"], "true")
            want = formula(r["collective.algorithm"], int(r["workers"]))
            self.assertAlmostEqual(float(r["simulated_time"]) / want, 1, delta=1e-9, msg=str(r))
            self.assertAlmostEqual(float(r["model_time"]) / want, 1, delta=1e-9)
            p = int(r["workers"])
            self.assertAlmostEqual(float(r["busbw"]), SIZE / want * 2 * (p - 1) / p, delta=1e-3)
            want_messages = 2 * p * (p - 1) if r["collective.algorithm"] == "ring" else 2 * (p - 1)
            self.assertEqual(int(r["message_count"]), want_messages)

    def test_json_output(self):
        self.sweep(SWEEP, "--out", self.tmp / "r.json", "-q")
        rows = json.loads((self.tmp / "r.json").read_text())
        self.assertEqual(len(rows), 8)
        self.assertEqual(rows[3]["workers"], 16)
        self.assertAlmostEqual(rows[3]["simulated_time"], formula("ring", 16), delta=1e-15)
        self.assertIs(rows[3]["verified"], True)

    def test_resume_runs_only_the_missing_points(self):
        out = self.tmp / "r.csv"
        self.sweep(SWEEP, "--out", out, "-q")
        full = self.rows(out)
        lines = out.read_text().splitlines()
        out.write_text("\n".join(lines[:4]) + "\n")  # header and three points
        done = self.sweep(SWEEP, "--out", out, "--resume")
        self.assertIn("8 points, 5 to run", done.stderr)
        strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_time"} for r in rows]
        self.assertEqual(strip(self.rows(out)), strip(full))

    def test_a_failing_point_is_recorded_and_the_sweep_goes_on(self):
        document = {"base": {"topology": "star:8", "collective": {"size": "4KiB"}}, "axes": {"workers": [4, 9, 8]}}
        self.sweep(document, "--out", self.tmp / "r.csv", "-q", expect=1)
        rows = self.rows(self.tmp / "r.csv")
        self.assertEqual([r["status"] for r in rows], ["ok", "failed", "ok"])
        self.assertIn("9 workers but 'star:8' has only 8 hosts", rows[1]["error"])

    def test_an_invalid_point_stops_the_sweep_before_it_runs(self):
        document = {"base": {"collective": {"size": "4KiB"}}, "axes": {"collective.algorithm": ["ring", "rnig"]}}
        done = self.sweep(document, "--out", self.tmp / "r.csv", expect=2)
        self.assertRegex(done.stderr, r"^collsim: error: point 1 \(collective.algorithm=rnig\): .*did you mean 'ring'")
        self.assertFalse((self.tmp / "r.csv").exists())

    def test_shards_merge_into_the_full_sweep(self):
        self.sweep(SWEEP, "--out", self.tmp / "full.csv", "-q")
        for k in (1, 2, 3):
            self.sweep(SWEEP, "--out", self.tmp / f"part{k}.csv", "--shard", f"{k}/3", "-q")
        self.assertEqual(len(self.rows(self.tmp / "part1.csv")), 3)  # points 0, 3, 6
        subprocess.run([COLLSIM, "sweep", "merge", *(self.tmp / f"part{k}.csv" for k in (1, 2, 3)), "--out",
                        self.tmp / "merged.csv"], check=True, capture_output=True, timeout=60)
        strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_time"} for r in rows]
        self.assertEqual(strip(self.rows(self.tmp / "merged.csv")), strip(self.rows(self.tmp / "full.csv")))

    def plot(self, document):
        """Runs the sweep into r.csv and plots it into r.svg; the picture's root element."""
        import xml.etree.ElementTree as ET
        self.sweep(document, "--out", self.tmp / "r.csv", "--plot", self.tmp / "r.svg", "-q", "--jobs", "2")
        return ET.parse(self.tmp / "r.svg").getroot()

    def test_plot_has_one_line_per_series_with_model_and_bound(self):
        svg = self.plot(SWEEP)
        lines = svg.findall(f"{SVG}polyline")
        solid = [l for l in lines if l.get("stroke-width") == "2"]
        dashed = [l for l in lines if l.get("stroke-dasharray") == "6 4"]
        self.assertEqual(len(solid), 2)   # ring, naive
        self.assertEqual(len(dashed), 2)  # their models
        for line in solid:
            self.assertEqual(len(line.get("points").split()), 4)  # p = 2, 4, 8, 16
        texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
        legend = [t.text for t in svg.iter(f"{SVG}text") if t.get("x") and float(t.get("x")) > 570]
        # the legend names the series by their values, under the axis they come from
        self.assertEqual(["algorithm", "naive", "ring", "model: dashed, a diamond at each point", "lower bound (dotted)"],
                         legend)
        self.assertIn("workers", texts)  # 2 to 16: linear, ticked at the data's values
        self.assertEqual(["2", "4", "8", "16"], texts[1:5])
        # the model is marked at each of its points (it hides under the simulated line otherwise)
        self.assertEqual(8, len([e for e in svg.iter(f"{SVG}path") if e.get("class") == "model-marker"]))
        # the legend fits beside the plot: the picture is as wide as its longest label needs
        self.assertEqual(float(svg.get("width")), 90 + 480 + 20 + 7.2 * len("model: dashed, a diamond at each point    "))
        # the same plot from the table, through render
        subprocess.run([COLLSIM, "render", self.tmp / "r.csv", "--plot", self.tmp / "again.svg"], check=True,
                       timeout=30)
        self.assertEqual((self.tmp / "again.svg").read_text(), (self.tmp / "r.svg").read_text().replace(
            "test: simulated time (whole run)", "simulated time (whole run) by workers"))

    def test_default_plot_of_zipped_axes_draws_what_was_swept(self):
        """workers and size zipped: x is workers, one line per algorithm (not a dot per point)."""
        svg = self.plot({"base": {"topology": "star:8", "collective": {"size": "1MiB"}},
                         "axes": {"collective.algorithm": ["ring", "naive"]},
                         "zip": [{"workers": [2, 4, 8], "collective.size": ["1MiB", "2MiB", "4MiB"]}]})
        solid = [l for l in svg.findall(f"{SVG}polyline") if l.get("stroke-width") == "2"]
        self.assertEqual([len(l.get("points").split()) for l in solid], [3, 3])
        texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
        self.assertIn("naive", texts)
        self.assertFalse([t for t in texts if "MiB" in t], texts)  # the size moves with x: no series of its own

    def test_long_legend_labels_fit_inside_the_picture(self):
        svg = self.plot({"base": {"topology": "star:4", "collective": {"size": "4KiB"}},
                         "axes": {"collective.kind": ["broadcast", "reduce"],
                                  "collective.algorithm": ["binomial", "flat"], "workers": [2, 4]}})
        width = float(svg.get("width"))
        self.assertEqual(svg.get("viewBox"), f"0 0 {svg.get('width')} 520")
        labels = [t for t in svg.iter(f"{SVG}text") if t.get("text-anchor") is None]  # title and legend
        self.assertIn("kind, algorithm", [t.text for t in labels])
        self.assertIn("broadcast, binomial", [t.text for t in labels])
        for label in labels:
            # at most 7 px per character of 12 px sans-serif
            self.assertLessEqual(float(label.get("x")) + 7 * len(label.text), width, label.text)

    def test_plot_options_references_scales_bounds_and_ideal_scaling(self):
        import xml.etree.ElementTree as ET
        self.sweep(SWEEP, "--out", self.tmp / "r.csv", "-q", "--jobs", "2")
        trace = self.tmp / "t.json"
        subprocess.run([COLLSIM, "run", "--workers", "4", "--topology", "star:4", "--size", "1MiB", "--quiet", "--trace",
                        trace], check=True, timeout=60)
        simulated = json.loads(trace.read_text())["summary"]["simulated_time"]
        out = self.tmp / "o.svg"
        subprocess.run([COLLSIM, "sweep", "plot", self.tmp / "r.csv", "--plot", out, "--y-scale", "linear", "--bound",
                        "none", "--ideal", "--title", "Ring against naive", "--reference", "ten ms=10ms",
                        "--reference", f"a run={trace}"], check=True, timeout=60, capture_output=True)
        svg = ET.parse(out).getroot()
        texts = [t.text for t in svg.iter(f"{SVG}text")]
        self.assertIn("Ring against naive", texts)
        self.assertIn("ten ms: 10 ms", texts)
        from labs_common import fmt_time
        self.assertIn(f"a run: {fmt_time(simulated).replace(' us', ' us')}", texts)
        self.assertNotIn("(log scale)", " ".join(texts[:12]).split("workers")[-1])  # y forced linear
        self.assertEqual([], [l for l in svg.iter(f"{SVG}polyline") if l.get("class") == "bound"])
        ideal = [l for l in svg.iter(f"{SVG}polyline") if l.get("class") == "ideal"]
        self.assertEqual(2, len(ideal))  # one per series, through its first point
        # bad options: one line, exit 2, no picture
        for args, says in ((["--y-scale", "cubic"], "--y-scale: 'cubic' is not allowed"),
                           (["--bound", "upper"], "--bound: 'upper' is not allowed"),
                           (["--reference", "no value"], "--reference: 'no value' is not LABEL=VALUE"),
                           (["--reference", "x=fast"], "--reference"),
                           (["--reference", f"x={self.tmp / 'missing.json'}"], "missing.json")):
            with self.subTest(args=args):
                done = subprocess.run([COLLSIM, "sweep", "plot", self.tmp / "r.csv", "--plot", self.tmp / "bad.svg", *args],
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(2, done.returncode, done.stderr)
                self.assertIn(says, done.stderr)
                self.assertEqual(1, len(done.stderr.strip().splitlines()))
                self.assertFalse((self.tmp / "bad.svg").exists())

    def test_a_sweep_file_says_how_to_plot_it(self):
        import xml.etree.ElementTree as ET
        document = dict(SWEEP, plot={"y": "busbw", "y_scale": "linear", "references": ["link B=10GBps"],
                                     "title": "busbw of the two"})
        svg = self.plot(document)
        texts = [t.text for t in svg.iter(f"{SVG}text")]
        self.assertIn("busbw of the two", texts)
        self.assertIn("link B: 10 GB/s", texts)
        self.assertIn("busbw (bus bandwidth)", texts)
        path = self.tmp / "bad-plot.json"
        path.write_text(json.dumps(dict(SWEEP, plot={"y_scal": "log"})))
        done = subprocess.run([COLLSIM, "sweep", str(path), "--out", str(self.tmp / "x.csv"), "--plot",
                               str(self.tmp / "x.svg")], capture_output=True, text=True, timeout=60)
        self.assertEqual(2, done.returncode)
        self.assertIn("plot.y_scal: unknown key (did you mean 'y_scale'?)", done.stderr)

    def test_show_prints_the_table_in_human_units(self):
        self.sweep(SWEEP, "--out", self.tmp / "r.csv", "-q", "--jobs", "2")
        rows = self.rows(self.tmp / "r.csv")
        done = subprocess.run([COLLSIM, "sweep", "show", self.tmp / "r.csv"], capture_output=True, text=True, timeout=60)
        self.assertEqual(0, done.returncode, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(["point", "collective.algorithm", "workers", "simulated", "time", "model", "efficiency", "busbw"],
                         lines[0].split())
        from labs_common import fmt_time
        for row, line in zip(rows, lines[1:]):
            cells = line.split()
            with self.subTest(point=row["point"]):
                self.assertEqual([row["point"], row["collective.algorithm"], row["workers"]], cells[:3])
                self.assertEqual(fmt_time(float(row["simulated_time"])), " ".join(cells[3:5]))
                self.assertEqual(f"{100 * float(row['efficiency']):.1f}%", cells[7])
                self.assertIn(cells[9], ("GB/s", "MB/s"))
        self.assertIn("simulated time: the whole run", lines[-1])
        # chosen metrics, sorted
        done = subprocess.run([COLLSIM, "sweep", "show", self.tmp / "r.csv", "--metrics", "busbw,message_count", "--sort",
                               "busbw"], capture_output=True, text=True, timeout=60)
        table = [line.split() for line in done.stdout.splitlines()[1:]]
        self.assertEqual(["point", "collective.algorithm", "workers", "busbw", "message", "count"],
                         done.stdout.splitlines()[0].split())
        busbw = [float(r["busbw"]) for r in sorted(rows, key=lambda r: float(r["busbw"]))]
        self.assertEqual([r["point"] for r in sorted(rows, key=lambda r: float(r["busbw"]))], [t[0] for t in table])
        self.assertEqual(sorted(busbw), busbw)
        for args, says in ((["--metrics", "speed"], "--metrics: 'speed' is not a metric"),
                           (["--sort", "colour"], "--sort: 'colour' is not a column shown")):
            done = subprocess.run([COLLSIM, "sweep", "show", self.tmp / "r.csv", *args], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(2, done.returncode)
            self.assertIn(says, done.stderr)

    def test_a_linear_size_axis_is_labelled_in_whole_mib(self):
        svg = self.plot({"base": {"topology": "star:2", "workers": 2},
                         "axes": {"collective.size": {"from": "1MiB", "to": "8MiB", "times": 2}}})
        texts = [t.text for t in svg.iter(f"{SVG}text")]
        self.assertIn("collective.size", texts)  # linear: not "collective.size (log scale)"
        # ticks at the data's own values (at most 12 of them), in whole MiB
        ticks = [text for text in texts if re.fullmatch(r"[0-9.]+ (B|KiB|MiB|GiB)", text)]
        self.assertEqual(ticks, ["1 MiB", "2 MiB", "4 MiB", "8 MiB"])

    def test_a_list_of_sizes_is_written_in_bytes_and_plotted_over(self):
        document = {"base": {"topology": "star:4", "workers": 4},
                    "axes": {"collective.size": ["1MiB", "4MiB"], "collective.algorithm": ["ring", "naive"]}}
        svg = self.plot(document)
        rows = self.rows(self.tmp / "r.csv")
        self.assertEqual(sorted({r["collective.size"] for r in rows}), ["1048576", "4194304"])
        self.assertEqual({r["collective.algorithm"] for r in rows}, {"ring", "naive"})  # names stay as written
        texts = [t.text for t in svg.iter(f"{SVG}text")]
        self.assertIn("collective.size", texts)
        # with the sizes as the lines, x is the next numeric axis: none here, so plotting fails clearly
        done = subprocess.run([COLLSIM, "sweep", "plot", str(self.tmp / "r.csv"), "--plot", str(self.tmp / "s.svg"),
                               "--series", "collective.size"], capture_output=True, text=True, timeout=60)
        self.assertEqual(2, done.returncode)
        self.assertIn("--x", done.stderr)

    def test_ctrl_c_keeps_finished_points_and_resume_finishes(self):
        import signal
        points = 200
        document = {"base": {"topology": "star:8", "collective": {"size": "1MiB"}},
                    "axes": {"seed": list(range(1, points + 1)), "workers": [8]}}
        path, out = self.tmp / "slow.json", self.tmp / "slow.csv"
        path.write_text(json.dumps(document))
        sweep = subprocess.Popen([COLLSIM, "sweep", str(path), "--out", str(out), "--jobs", "1"],
                                 stderr=subprocess.PIPE, text=True)
        # interrupt as soon as two points are reported done, however fast the machine is
        seen = []
        for line in sweep.stderr:
            seen.append(line)
            if line.startswith(f"sweep: 2/{points} "):
                break
        sweep.send_signal(signal.SIGINT)
        _, rest = sweep.communicate(timeout=60)
        stderr = "".join(seen) + rest
        self.assertEqual(sweep.returncode, 130, stderr)
        self.assertIn("interrupted", stderr)
        done = len(self.rows(out))
        self.assertGreater(done, 0)
        self.assertLess(done, points)
        resumed = self.sweep(document, "--out", out, "--resume", "--jobs", "2")
        self.assertIn(f"{points} points, {points - done} to run", resumed.stderr)
        self.assertEqual([int(r["point"]) for r in self.rows(out)], list(range(points)))

    def test_the_ready_sweeps_expand(self):
        for path in sorted((REPO / "scenarios" / "sweeps").glob("*.json")):
            with self.subTest(sweep=path.name):
                document = json.loads(path.read_text())
                self.assertIn("description", document)
                # --shard 1/1000 runs at most a point or two: enough to prove it expands and runs
                done = subprocess.run([COLLSIM, "sweep", str(path), "--shard", "1/1000", "-q", "--out",
                                       self.tmp / f"{path.stem}.csv"], capture_output=True, text=True, timeout=120,
                                      cwd=REPO)
                self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    unittest.main()
