"""Issue 47's hostile-input classes (the third hardening round): every case ends within
seconds with exit 2 and one line "collsim: error: ...", nothing on stdout, nothing left
behind; a failed run (a sweep point that stalls) exits 1. Each class is probed with inputs
of its own beside the issue's reproducer.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_hostile -v   (from tests/cli)
"""
import csv
import json
import re
import subprocess
import time
import unittest

from test_cli import COLLSIM, REPO, SMALL
from test_hardening import SLOW, Hardening

RING_SWEEP = {"base": {"topology": "star:4", "collective": {"size": "4KiB"}}, "axes": {"workers": [2, 3, 4]}}


class RenderTimes(Hardening):
    """render reads every time of a trace as a simulated time (0 to 1e9 s) and every
    interval's end after its start: a message "ending" at -1 segfaulted the HTML report."""

    def setUp(self):
        super().setUp()
        self.assert_ok("run", *SMALL, "--trace", self.tmp / "good.json", "-q")
        self.good = json.loads((self.tmp / "good.json").read_text())

    def bad_trace(self, change):
        trace = json.loads(json.dumps(self.good))
        change(trace)
        path = self.tmp / "bad.json"
        path.write_text(json.dumps(trace))
        return path

    def test_times_out_of_range_in_every_place(self):
        def set_(section, index, key, value):
            def change(trace):
                (trace[section][index] if index is not None else trace[section])[key] = value
            return change
        cases = [(set_("messages", 0, "end", -1), r"messages\[0\]\.end: -1 is not a simulated time"),
                 (set_("messages", 0, "start", 1e20), r"messages\[0\]\.start: 1e\+20 is not a simulated time"),
                 (lambda t: t["messages"][0].update(start=t["messages"][0]["end"] + 1e-6),
                  r"messages\[0\]\.end: .* is before its start"),
                 (set_("rounds", 0, "end", 1e300), r"rounds\[0\]\.end: 1e\+300 is not a simulated time"),
                 (set_("summary", None, "simulated_time", -5), r"summary\.simulated_time: -5"),
                 (set_("messages", 0, "bytes", -1), r"messages\[0\]\.bytes: -1 is out of range")]
        for change, pattern in cases:
            for flag, name in [("--html", "o.html"), ("--svg", "o.svg"), ("--perfetto", "o.json")]:
                with self.subTest(pattern=pattern, flag=flag):
                    self.assert_refused(["render", self.bad_trace(change), flag, self.tmp / name], pattern)
                    (self.tmp / "bad.json").unlink()


    def test_link_series_count_toward_the_perfetto_limit(self):
        def long_series(trace):
            for link in trace["links"]["list"]:
                link["series"] = [0.0] * 50000  # 8 links x 50,001 counter events: 400,008 > 200,000
        line = self.assert_refused(["render", self.bad_trace(long_series), "--perfetto", self.tmp / "o.json"],
                                   r"--perfetto: .* would expand to about 4(\.\d+)?e\+05 events")
        self.assertIn("at most 20 per entry of the trace, or 200000", line)


class PlotExtremes(Hardening):
    """sweep plot at the ends of the doubles: 5e-324 made a log axis's tick loop stop moving,
    1e20 and its next double a linear one; inf and NaN never reach the picture."""

    def table(self, values, column="simulated_time"):
        self.assert_ok("sweep", self.write("s.json", json.dumps(RING_SWEEP)), "--out", self.tmp / "r.csv", "-q")
        rows = list(csv.DictReader((self.tmp / "r.csv").read_text().splitlines()))
        for row, value in zip(rows, values):
            row[column] = value
        path = self.tmp / "extreme.csv"
        with path.open("w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
        return path

    def test_extreme_values_draw_within_seconds(self):
        for values in [["5e-324", "1e-3", "2e-3"], ["1e20", "1.0000000000000002e20", "1e20"],
                       ["1e308", "1.7976931348623157e308", "1e-300"], ["-1e308", "1e308", "0"],
                       ["5e-324", "1e-323", "5e-324"], ["inf", "nan", "1"]]:
            for scale in ["auto", "log", "linear"]:
                with self.subTest(values=values, scale=scale):
                    svg = self.tmp / "p.svg"
                    done = self.collsim("sweep", "plot", self.table(values), "--plot", svg, "--y-scale", scale)
                    if done.returncode == 2:  # nothing numeric to draw: refused in one line
                        self.assertRegex(done.stderr, r"^collsim: error: [^\n]*\n$")
                        continue
                    self.assertEqual(done.returncode, 0, done.stderr)
                    text = svg.read_text()
                    for word in ["nan", '"inf', 'inf"', "-inf"]:
                        self.assertNotIn(word, text)


class SweepStatuses(Hardening):
    def test_a_sweep_whose_points_stall_exits_1_and_keeps_their_metrics(self):
        sweep = {"base": {"topology": "star:4", "workers": 4, "collective": {"size": "4KiB"},
                          "training": {"rounds": 2},
                          "faults": [{"kind": "link-down", "rank": 1, "at": "0s"}]},
                 "axes": {"collective.algorithm": ["ring", "naive"]}}
        out = self.tmp / "r.csv"
        done = self.collsim("sweep", self.write("s.json", json.dumps(sweep)), "--out", out, "-q")
        self.assertEqual(done.returncode, 1, done.stderr)
        rows = list(csv.DictReader(out.read_text().splitlines()))
        self.assertEqual([row["status"] for row in rows], ["stalled", "stalled"])
        self.assertEqual([row["stalled"] for row in rows], ["true", "true"])

    def test_point_numbers_are_whole_numbers_from_0(self):
        self.assert_ok("sweep", self.write("s.json", json.dumps(RING_SWEEP)), "--out", self.tmp / "r.csv", "-q")
        text = (self.tmp / "r.csv").read_text()
        for point in ["4294967301", "3.7", "-1", "0x10", "1e3"]:
            with self.subTest(point=point):
                lines = text.splitlines()
                lines[1] = point + lines[1][lines[1].index(","):]
                part = self.write("part.csv", "\n".join(lines) + "\n")
                self.assert_refused(["sweep", "merge", part, "--out", self.tmp / "m.csv"],
                                    r"has a row whose point number .* is not a whole number from 0 to 2147483647")

    def test_resume_refuses_a_file_that_is_no_results_table(self):
        for text in ["garbage\n", "", "a,b\n1,2\n"]:
            with self.subTest(text=text):
                out = self.write("r.csv", text)
                self.assert_refused(["sweep", self.write("s.json", json.dumps(RING_SWEEP)), "--out", out, "--resume"],
                                    r"--resume: .* is not a results table")
                self.assertEqual(out.read_text(), text)

    def test_a_stale_temporary_whose_number_is_no_pid_stays(self):
        stale = self.tmp / "r.csv.tmp.99999999999999999999999"
        stale.write_text("half")
        self.assert_ok("sweep", self.write("s.json", json.dumps(RING_SWEEP)), "--out", self.tmp / "r.csv", "--resume",
                       "-q")
        self.assertTrue(stale.exists())

    def test_series_names_an_axis(self):
        self.assert_ok("sweep", self.write("s.json", json.dumps(RING_SWEEP)), "--out", self.tmp / "r.csv", "-q")
        self.assert_refused(["sweep", "plot", self.tmp / "r.csv", "--plot", self.tmp / "p.svg", "--series", "workrs"],
                            r"--series: 'workrs' is not an axis of the results \(did you mean 'workers'\?\)")


class RawMessages(Hardening):
    """What reached the user as a C++ library's words ("stol", "File name too long" from a
    filesystem call, "max_size()") is one line naming the input, exit 2."""

    def test_names_too_long_for_the_file_system(self):
        name = "a" * 300
        for args in [["run", "--topology", name + ".xml", *SMALL[:2]], ["compare", name + ".json", name + ".json"],
                     ["run", self.tmp / name / "s.json"], ["render", name + ".json", "--svg", self.tmp / "o.svg"]]:
            with self.subTest(args=args[:2]):
                line = self.assert_refused(args, r"File name too long|longer than")
                self.assertNotIn("filesystem error", line)
                self.assertLess(len(line), 700)

    def test_a_million_character_key_is_one_short_line_at_once(self):
        path = self.write("k.json", json.dumps({"x" * 1000000: 1}))
        line = self.assert_refused(["run", path], r"x{60}\.\.\.: unknown key; allowed: name, ", timeout=2)
        self.assertLess(len(line), 400)

    def test_bytes_after_a_nul_are_not_ignored(self):
        for name, data in [("s.json", b'{"workers": 4}\0garbage'), ("p.xml", b"<?xml version='1.0'?>\0<platform/>")]:
            with self.subTest(name=name):
                path = self.tmp / name
                path.write_bytes(data)
                args = ["run", path] if name.endswith(".json") else ["run", "--topology", path]
                self.assert_refused(args, r"has a NUL byte at offset \d+: not a text file")

    def test_an_output_path_naming_a_folder_leaves_none(self):
        for path in ["o.x/", "sub/.", "sub/.."]:
            with self.subTest(path=path):
                self.assert_refused(["run", *SMALL, "--svg", f"{self.tmp}/{path}"], r"--svg: .* names a folder")
                self.assertFalse((self.tmp / "o.x").exists())

    def test_a_platform_simgrid_cannot_route_on_is_named(self):
        # topologies/two-zones.xml without its zoneRoute: two clusters in a Full zone that no
        # route joins, which SimGrid 3.32 loads and refuses only when a route is asked:
        # "Bad gateways for route from 'host-7' to 'host-8'." (before: exit 1, raw library text)
        xml = (REPO / "topologies" / "two-zones.xml").read_text()
        start, end = xml.index("    <zoneRoute"), xml.index("  </zone>\n</platform>")
        platform = self.write("apart.xml", xml[:start] + xml[end:])
        scenario = self.write("s.json", json.dumps({"topology": str(platform), "workers": 16}))
        want = (r"^collsim: error: topology: SimGrid cannot route on '.*apart\.xml': Bad gateways for route from "
                r"'host-7' to 'host-8'\.$")
        for args in [["run", scenario], ["validate", scenario],
                     ["model", "--topology", platform, "--workers", "16", "--size", "1MiB"],
                     ["model", "--topology", platform, "--workers", "16", "--size", "1MiB", "--algorithm", "all"]]:
            with self.subTest(args=args[:2]):
                self.assert_refused(args, want)

    def test_integers_of_model_flags_are_decimal(self):
        model = ["model", "--algorithm", "ring", "--size", "1MiB", "--bandwidth", "1GBps", "--latency", "1us"]
        for flag, value in [("--workers", "0x10"), ("--workers", "1e3"), ("--servers", "0b11"), ("--workers", "010x")]:
            with self.subTest(flag=flag, value=value):
                args = model + ["--workers", "16"] if flag != "--workers" else model
                self.assert_refused(args + [flag, value], rf"{flag}: '{value}' is not a whole number")


class TrainingValues(Hardening):
    def test_a_learning_rate_that_can_only_diverge_is_refused(self):
        for rate in ["1e300", "1e30", "2"]:
            with self.subTest(rate=rate):
                self.assert_refused(["run", *SMALL, "--set", "training.model=linear-regression", "--set",
                                     f"training.learning_rate={rate}"],
                                    r"training\.learning_rate: .* is too large; at most 1")
        self.assert_ok("run", *SMALL, "--set", "training.model=linear-regression", "--set", "training.learning_rate=1",
                       "--rounds", "3", "-q")

    def test_parameters_and_samples_too_large_together_name_both(self):
        # (2^24 + 1) x 2^26 x 8 bytes: 8 PiB; the default samples, 64 per worker (256 here), count too: 32 GiB
        for sets, samples in [(["--set", "training.samples=67108864"], 67108864), ([], 256)]:
            with self.subTest(samples=samples):
                args = ["run", "--workers", "4", "--topology", "star:4", "--set", "training.model=linear-regression",
                        "--set", "training.parameters=16777216", *sets]
                self.assert_refused(args, rf"training\.parameters x training\.samples: 16777216 x {samples} features "
                                          r"of 8 bytes make a .* data set; at most 8 GiB")


class FormulaModelBounds(Hardening):
    """collsim model without a platform (the alpha-beta star) keeps the model's own limits too
    (README "Limits"): a schedule beyond them is refused in one line at once; a pipelined tree
    within them is priced in seconds, its steady steps counted, not described one by one."""
    STAR = ["--size", "1GiB", "--bandwidth", "10GBps", "--latency", "1us"]

    def test_schedules_beyond_the_limits_are_refused_at_once(self):
        # before: binary-tree at 10^6 ranks aborted at 8.7 GB, direct at 10^5 took 160 s and 21 GB
        for algorithm, p in [("binary-tree", 1000000), ("direct", 100000)]:
            with self.subTest(algorithm=algorithm, p=p):
                self.assert_refused(["model", "--workers", p, "--algorithm", algorithm, *self.STAR],
                                    rf"^collsim: error: --algorithm: {algorithm} on {p} ranks: its schedule describes "
                                    r"more than 8388608 messages \(the model's limit, README \"Limits\"\)$",
                                    timeout=30)

    def test_every_pair_on_a_platform_is_refused_before_its_pairs_are_listed(self):
        # direct and alltoall talk between all p(p-1)/2 pairs; on a platform the model read the
        # route of each before the schedule's limit could refuse it (before: at 16,384 ranks 8.6 s
        # and 1.1 GB to refuse, at 131,072 an abort after 20 GB; now 0.4 s and 180 MB)
        for collective, algorithm in [("allreduce", "direct"), ("alltoall", "pairwise"), ("alltoall", "direct")]:
            with self.subTest(algorithm=algorithm):
                self.assert_refused(["model", "--workers", 131072, "--topology", "dgx-h100:16384", "--collective",
                                     collective, "--algorithm", algorithm, "--size", "1GiB"],
                                    rf"^collsim: error: --algorithm: {algorithm} on 131072 ranks: its schedule describes "
                                    r"more than 8388608 messages \(the model's limit, README \"Limits\"\)$",
                                    timeout=30)

    def test_a_long_pipelined_tree_is_priced_as_its_formula(self):
        # 2 (2k - 2 + W) (alpha + n/(kB)) (docs/algorithms.md): k = 1024 segments of 1 MiB, W the
        # heap tree's depth with 2 for every turn to a second child
        p, k, step = 20000, 1024, 1e-6 + 2**20 / 10e9
        depth = [0] * p
        for v in range(1, p):
            depth[v] = depth[(v - 1) // 2] + (1 if v % 2 else 2)
        steps = 2 * (2 * k - 2 + max(depth))
        started = time.monotonic()
        out = self.assert_ok("model", "--workers", p, "--algorithm", "binary-tree", *self.STAR)
        self.assertLess(time.monotonic() - started, 20 * SLOW)
        self.assertRegex(out, rf"steps +{steps} \(")
        got = float(re.search(r"model time +([\d.]+) ms", out).group(1)) * 1e-3
        self.assertAlmostEqual(got / (steps * step), 1, delta=1e-5)


class Tools(Hardening):
    """The tools/ scripts keep the contract too: one line and exit 2 for bad input."""

    def test_a_missing_collsim_is_one_line(self):
        for tool in ["fuzz", "gallery", "recovery-delays", "validation-table"]:
            with self.subTest(tool=tool):
                done = subprocess.run([str(REPO / "tools" / tool), "--collsim", str(self.tmp / "nosuch")],
                                      capture_output=True, text=True, timeout=30)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertNotIn("Traceback", done.stderr)
                self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                self.assertIn("is not a collsim binary", done.stderr)

    def assert_one_line(self, args, pattern, env=None):
        done = subprocess.run([str(REPO / "tools" / args[0]), *args[1:]], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, env=env)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertRegex(done.stderr, pattern)

    def test_bad_flags_and_values_are_one_line(self):
        # before: argparse's usage block (2-3 lines), tracebacks for nan, a file as a folder, a
        # missing bare_ring or a size 'abc', exit 0 for a root without sources or -5 cases
        not_a_folder = self.write("f.txt", "x")
        cases = [[tool, "--nosuch"] for tool in ["benchmark", "check-file-length", "check-function-length",
                                                   "check-layers", "fuzz", "gallery", "recovery-delays", "sync-docs",
                                                   "validation-table"]]
        for case in cases:
            with self.subTest(case=case):
                self.assert_one_line(case, rf"^{case[0]}: error: unrecognized arguments: --nosuch$")
        for case, pattern in [
            (["fuzz", "--timeout", "nan"], r"--timeout: 'nan' is not allowed; a number of seconds, finite and > 0"),
            (["fuzz", "--cases", "-5"], r"--cases: -5 is not allowed; cases to run, an integer >= 1"),
            (["fuzz", "--seed", "0x10"], r"--seed: '0x10' is not allowed"),
            (["fuzz", "--keep", not_a_folder], r"--keep: '.*f\.txt' is not a folder"),
            (["recovery-delays", "--sizes", "8,abc"], r"--sizes: 'abc' is not allowed; numbers of ranks"),
            (["recovery-delays", "--sizes", ""], r"--sizes: '' is not allowed"),
            (["recovery-delays", "--sizes", "8,2"], r"--sizes: 2 is not allowed; numbers of ranks"),
            (["benchmark", "--bare", str(self.tmp / "nosuch")], r"nosuch is not a bare_ring binary .*give --bare\)$"),
            (["benchmark", "--repeat", "\u00b2"], r"--repeat: '\u00b2' is not allowed"),
            (["check-file-length", "--root", str(self.tmp)], r"--root: '.*' has no src/ folder"),
            (["check-function-length", "--top", "-1"], r"--top: -1 is not allowed"),
            (["check-layers", "--root", not_a_folder], r"--root: '.*' is not a folder"),
            (["sync-docs", "--root", str(self.tmp), "--check"], r"--root: '.*' has no docs/ folder"),
        ]:
            with self.subTest(case=case):
                self.assert_one_line(case, pattern)

    def test_shell_tools_refuse_what_they_do_not_take(self):
        # before: run-tests, build, quickstart and sanitize ignored any argument and started a build
        # (here a cmake, ctest or apt-get that only fails, should one be reached)
        fake = self.tmp / "bin"
        fake.mkdir()
        for program in ["cmake", "ctest", "make", "apt-get", "sudo"]:
            (fake / program).write_text("#!/bin/sh\necho 'not here' >&2\nexit 99\n")
            (fake / program).chmod(0o755)
        env = {"PATH": f"{fake}:/usr/bin:/bin"}
        for tool in ["run-tests", "build", "quickstart", "sanitize"]:
            with self.subTest(tool=tool):
                self.assert_one_line([tool, "--nosuch"], rf"^{tool}: error: unexpected argument '--nosuch'", env)
        self.assert_one_line(["install-deps", "--test"], r"unexpected argument '--test'; allowed: --tests", env)
        self.assert_one_line(["check-baselines", str(self.tmp / "nosuch")], r"nosuch is not a collsim binary")
        self.assert_one_line(["slurm-sweep", str(self.tmp / "nosuch.json"), str(self.tmp / "o.csv")],
                             r"SWEEP\.json '.*nosuch\.json' is not a file")

    def test_slurm_sweep_leaves_no_parts_behind(self):
        sweep = self.write("s.json", json.dumps(RING_SWEEP))
        out = self.tmp / "out.csv"
        fake = self.tmp / "bin"
        fake.mkdir()
        (fake / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: no partition' >&2\nexit 1\n")
        (fake / "sbatch").chmod(0o755)
        env = {"PATH": f"{fake}:/usr/bin:/bin", "COLLSIM": COLLSIM}  # a cluster that refuses the job
        done = subprocess.run([str(REPO / "tools" / "slurm-sweep"), sweep, str(out), "2"], capture_output=True,
                              text=True, timeout=60, env=env)
        self.assertNotEqual(done.returncode, 0, done.stderr)
        self.assertEqual([p.name for p in self.tmp.glob("out.csv.parts.*")], [])
        done = subprocess.run([str(REPO / "tools" / "slurm-sweep"), sweep, str(out), "x"], capture_output=True,
                              text=True, timeout=60, env=env)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("TASKS 'x' must be a whole number", done.stderr)


if __name__ == "__main__":
    unittest.main()
