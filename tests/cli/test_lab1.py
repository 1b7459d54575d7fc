"""Lab 1 (docs/labs/lab1-reduce-and-broadcast.md): the page's commands run as a student
runs them, and every figure the page and its answers (docs/labs/answers-lab1.md) quote is
checked against the runs and against the formulas written out here.

    COLLSIM=build/collsim python3 -m unittest test_lab1 -v   (from tests/cli)
"""
import csv
import json
import math
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import labs_common
from labs_common import REPO, COLLSIM, OUT, fmt_time, rows_of

PAGE = "lab1-reduce-and-broadcast.md"
ANSWERS = "answers-lab1.md"
P, ALPHA, B, O = 16, 2e-6, 10e9, 1e-6   # star:16: two 1 us, 10 GB/s links per route; o = 1 us
SEG = 1 << 20                           # 1 MiB segments
MiB, KiB = 1 << 20, 1 << 10
STEPS = math.ceil(math.log2(P))         # 4 binomial rounds


def t(n, o=O):
    """One message of n bytes on its own."""
    return o + ALPHA + n / B


def formula(kind, algorithm, n, o=O):
    if algorithm == "binomial":
        return STEPS * t(n, o)
    if (kind, algorithm) == ("broadcast", "flat"):
        return ALPHA + max(o + (P - 1) * n / B, (P - 1) * o + n / B)
    if (kind, algorithm) == ("reduce", "flat"):
        return o + ALPHA + (P - 1) * n / B
    if (kind, algorithm) == ("broadcast", "pipeline"):
        k = max(1, math.ceil(n / SEG))
        segment = min(n, SEG)
        last = n - (k - 1) * segment
        return (k + P - 3) * t(segment, o) + t(last, o)
    raise ValueError(algorithm)






def time_of(rows, kind, algorithm, n):
    (row,) = [r for r in rows if r["collective.algorithm"] == algorithm and int(r["collective.size"]) == n
              and r.get("collective.kind", kind) == kind]
    return float(row["collective_time"])




# the platform, the sizes and the segment: inputs, not results
GIVEN = {"11 n/B", "15 n/B", "3 MiB", "7 MiB", "1 us", "2 us", "10 GB/s", "4 B", "16 B", "64 B", "4 KiB", "16 KiB", "1 MiB", "5 MiB", "8 MiB", "64 MiB"}


class Lab1(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = labs_common.run_lab_commands(PAGE)
        cls.page = labs_common.figures_in_page(PAGE) + " " + labs_common.section_text(ANSWERS, "What the runs show")
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.broadcast = rows_of("lab1-broadcast.csv")
        cls.reduce = rows_of("lab1-reduce.csv")
        cls.crossover = rows_of("lab1-crossover.csv")
        for row in cls.broadcast + cls.crossover:
            row["collective.kind"] = "broadcast"
        for row in cls.reduce:
            row["collective.kind"] = "reduce"
        cls.traces = {name: json.loads((OUT / f"lab1-{name}.json").read_text())
                      for name in ("flat-o1", "flat-o0", "pipeline-5MiB")}

    def sim(self, kind, algorithm, n):
        return time_of(self.reduce if kind == "reduce" else self.broadcast, kind, algorithm, n)

    def test_every_point_equals_its_formula(self):
        self.assertEqual(65, len(self.broadcast) + len(self.reduce))
        self.assertEqual(16, len(self.crossover))
        sizes = sorted({int(r["collective.size"]) for r in self.broadcast})
        self.assertEqual([4 * 4 ** i for i in range(13)], sizes)   # 4 B ... 64 MiB
        self.assertEqual([i * MiB for i in range(1, 9)], sorted({int(r["collective.size"]) for r in self.crossover}))
        for row in self.broadcast + self.reduce + self.crossover:
            with self.subTest(kind=row["collective.kind"], algorithm=row["collective.algorithm"],
                              size=row["collective.size"]):
                self.assertEqual("ok", row["status"])
                self.assertEqual("true", row["verified"])
                want = formula(row["collective.kind"], row["collective.algorithm"], int(row["collective.size"]))
                self.assertClose(want, float(row["collective_time"]))
                self.assertClose(want, float(row["model_time"]))
        self.assertQuoted("65 points", ("page",))
        self.assertQuoted("the 16 of the crossover sweep", ("page",))
        self.assertQuoted("relative 1e-6", ("page",))

    def test_the_table_is_the_simulated_time(self):
        columns = [("broadcast", "binomial"), ("broadcast", "flat"), ("broadcast", "pipeline"),
                   ("reduce", "binomial"), ("reduce", "flat")]
        sizes = {"4 B": 4, "16 KiB": 16 * KiB, "1 MiB": MiB, "64 MiB": 64 * MiB}
        lines = labs_common.page_text(ANSWERS).splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("| size |"))
        table = [line for line in lines[start:] if line.startswith("| ")]
        header = [c.strip() for c in table[0].strip("|").split("|")]
        self.assertEqual(["size"] + [f"{k} {a}" for k, a in columns], header)
        body = {}
        for line in table[1:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] in sizes:
                body[cells[0]] = cells[1:]
        self.assertEqual(set(sizes), set(body))
        for label, n in sizes.items():
            for (kind, algorithm), cell in zip(columns, body[label]):
                with self.subTest(size=label, kind=kind, algorithm=algorithm):
                    want = formula(kind, algorithm, n)
                    self.assertEqual(fmt_time(want), cell)
                    self.record(cell)
                    self.assertClose(want, self.sim(kind, algorithm, n))

    def test_tiny_messages_are_latency_bound(self):
        n = 4
        self.assertRounds("0.4 ns", n / B, "answers")
        self.assertQuoted(f"alpha + 15 n/B = 2 us + {(P - 1) * n / B * 1e9:.0f} ns = 2.006 us", ("answers",))
        binomial, flat_, pipeline = (self.sim("broadcast", a, n) for a in ("binomial", "flat", "pipeline"))
        self.assertLess(binomial, flat_)
        self.assertLess(flat_, pipeline)
        self.assertClose(4 * (O + ALPHA + n / B), binomial)           # 4 message times
        self.assertClose(15 * O + ALPHA + n / B, flat_)                # 15 overheads
        self.assertClose(15 * (O + ALPHA + n / B), pipeline)           # 15 hops
        for figure in ("12.0016 us", "17.0004 us", "45.006 us", "3.0004 us"):
            self.assertQuoted(figure, ("answers",))
        for figure in ("12.0016 us", "17.0004 us", "45.006 us"):
            self.assertQuoted(figure, ("page",))
        # the fixed part of a message equals its bytes at (o + alpha) B
        self.assertEqual(30000, round((O + ALPHA) * B))
        self.assertQuoted("(o + alpha) B = 30 kB", ("page",))

    def test_flat_broadcast_without_overhead_pays_one_alpha(self):
        o1 = self.traces["flat-o1"]
        o0 = self.traces["flat-o0"]
        self.assertEqual(1e-6, o1["scenario"]["message_overhead"])
        self.assertEqual(0, o0["scenario"]["message_overhead"])
        n = 4
        self.assertClose(15 * O + ALPHA + n / B, o1["summary"]["collective_time"])
        want = ALPHA + (P - 1) * n / B
        self.assertClose(want, o0["summary"]["collective_time"])
        self.assertEqual(15, o0["summary"]["message_count"])
        bound = STEPS * ALPHA
        self.assertClose(bound, o0["summary"]["lower_bound"])
        self.assertClose(bound / want, o0["summary"]["efficiency"])
        efficiency = f"{100 * bound / want:.1f}%"
        for figure in (fmt_time(want), efficiency, fmt_time(bound)):
            self.assertQuoted(figure)
        self.assertEqual("2.006 us", fmt_time(want))
        self.assertEqual("398.8%", efficiency)

    def test_the_flat_timelines_show_the_overhead(self):
        import xml.etree.ElementTree as ET
        svg = "{http://www.w3.org/2000/svg}"
        for name, o in (("flat-o1", O), ("flat-o0", 0)):
            with self.subTest(name):
                root = ET.parse(OUT / f"lab1-{name}.svg").getroot()
                overheads = [r for r in root.iter(svg + "rect") if r.get("class") == "overhead"]
                labels = [t.text for t in root.iter(svg + "text") if "overlap" in (t.get("class") or "")]
                legend = [t.text for t in root.iter(svg + "text")]
                if o:
                    # one strip of o per message, back to back: the root posts a copy every o
                    self.assertEqual(P - 1, len(overheads))
                    xs = sorted(float(r.get("x")) for r in overheads)
                    widths = {round(float(r.get("width")), 1) for r in overheads}
                    self.assertEqual(1, len(widths))
                    self.assertTrue(all(abs(b - a - float(overheads[0].get("width"))) < 0.1
                                        for a, b in zip(xs, xs[1:])))
                    self.assertEqual([f"{P - 1} in flight, started 1 µs apart"], labels)
                    self.assertIn("overhead o = 1 µs before each message leaves", legend)
                else:
                    self.assertEqual([], overheads)
                    self.assertEqual([f"{P - 1} at once"], labels)

    def test_flat_reduce_wins_small_reduces(self):
        # o + alpha + 15 n/B < 4 (o + alpha + n/B)  <=>  n < 3 (o + alpha) B / 11
        limit = 3 * (O + ALPHA) * B / 11
        self.assertQuoted(f"{limit:.0f} bytes")
        self.assertQuoted("3/11", ("page",))
        for row in self.reduce:
            n = int(row["collective.size"])
            with self.subTest(size=n):
                flat_, tree = self.sim("reduce", "flat", n), self.sim("reduce", "binomial", n)
                self.assertEqual(n < limit, flat_ < tree)
        self.assertClose(O + ALPHA + 15 * 4 / B, self.sim("reduce", "flat", 4))
        self.assertQuoted("3.006 us")
        for n in (4 * KiB, 16 * KiB):
            for algorithm in ("flat", "binomial"):
                self.assertQuoted(fmt_time(self.sim("reduce", algorithm, n)))
        self.assertEqual(["9.144 us", "13.6384 us", "27.576 us", "18.5536 us"],
                         [fmt_time(self.sim("reduce", a, n)) for n in (4 * KiB, 16 * KiB) for a in ("flat", "binomial")])

    def test_large_messages_are_bandwidth_bound(self):
        n = 64 * MiB
        times = {a: self.sim("broadcast", a, n) for a in ("binomial", "flat", "pipeline")}
        self.assertLess(times["pipeline"], times["binomial"])
        self.assertLess(times["binomial"], times["flat"])
        ratios = {a: v / (n / B) for a, v in times.items()}
        self.assertEqual("15.0", f"{ratios['flat']:.1f}")
        self.assertEqual("4.00", f"{ratios['binomial']:.2f}")
        self.assertEqual("1.25", f"{ratios['pipeline']:.2f}")
        # the reduces move the same bytes through the root's link as the broadcasts
        self.assertEqual("15.0", f"{self.sim('reduce', 'flat', n) / (n / B):.1f}")
        self.assertEqual("4.00", f"{self.sim('reduce', 'binomial', n) / (n / B):.2f}")
        for figure in ("15.0 n/B", "4.00 n/B", "1.25 n/B"):
            self.assertQuoted(figure)
        self.assertQuoted(fmt_time(n / B), ("answers",))
        # the pipeline over n/B falls as segments outnumber the hops
        over = [self.sim("broadcast", "pipeline", m) / (m / B) for m in (4 * MiB, 16 * MiB, 64 * MiB)]
        self.assertEqual(["4.63", "1.93", "1.25"], [f"{r:.2f}" for r in over])
        self.assertEqual(sorted(over, reverse=True), over)
        self.assertQuoted("4.63 at 4 MiB to 1.93 at 16 MiB and 1.25 at 64 MiB", ("page",))
        self.assertQuoted("4.63 at 4 MiB, 1.93 at 16 MiB, 1.25 at 64 MiB", ("answers",))
        # ... towards t(s)/(s/B) = 1 + (o + alpha) B / s, from above
        limit = 1 + (O + ALPHA) * B / SEG
        self.assertGreater(over[-1], limit)
        self.assertQuoted(f"≈ {limit:.2f}", ("answers",))
        # (64 + 14) message times of a 1 MiB segment
        self.assertClose(78 * t(SEG), times["pipeline"])
        self.assertQuoted(f"(64 + 14) × {fmt_time(t(SEG))} = {fmt_time(times['pipeline'])}", ("answers",))

    def test_crossover(self):
        c, s = O + ALPHA, SEG
        n_star = ((P - 2) * (c + s / B) - STEPS * c) / (STEPS / B - (c + s / B) / s)
        self.assertQuoted(f"n = {n_star / MiB:.2f} MiB", ("page",))
        self.assertQuoted(f"= {n_star / MiB:.2f} MiB", ("answers",))
        for m in range(1, 9):
            n = m * MiB
            tree = time_of(self.crossover, "broadcast", "binomial", n)
            pipeline = time_of(self.crossover, "broadcast", "pipeline", n)
            with self.subTest(size=n):
                self.assertEqual(n > n_star, pipeline < tree)
        for n in (4 * MiB, 5 * MiB):
            for algorithm in ("binomial", "pipeline"):
                self.assertQuoted(fmt_time(time_of(self.crossover, "broadcast", algorithm, n)))
        self.assertEqual(["1.68972 ms", "1.94144 ms", "2.04929 ms", "2.10915 ms"],
                         [fmt_time(time_of(self.crossover, "broadcast", a, n))
                          for n, algorithms in ((4 * MiB, ("binomial", "pipeline")), (5 * MiB, ("pipeline", "binomial")))
                          for a in algorithms])

    def test_pipeline_5MiB(self):
        trace = self.traces["pipeline-5MiB"]
        s = trace["summary"]
        k = 5
        self.assertEqual((P - 1) * k, s["message_count"])
        self.assertClose((k + P - 2) * t(SEG), s["collective_time"])
        self.assertQuoted(f"{(P - 1) * k} messages in {k + P - 2} steps of {fmt_time(t(SEG))}", ("page",))
        report = (OUT / "lab1-pipeline-5MiB.html").read_text()
        self.assertIn("75 messages in 19 steps", report)
        self.assertQuoted("a staircase of 19 steps", ("page",))

    def test_segments_are_whole_whatever_memory_carries(self):
        # what the answers say about the crossover sweep: 3 MiB is 3 segments, 45 messages
        with tempfile.TemporaryDirectory() as folder:
            trace = Path(folder) / "t.json"
            subprocess.run([COLLSIM, "run", "--collective", "broadcast", "--algorithm", "pipeline", "--topology",
                            f"star:{P}", "--size", "3MiB", "--overhead", "1us", "--quiet", "--trace", str(trace)],
                           cwd=REPO, check=True, timeout=60)
            s = json.loads(trace.read_text())["summary"]
        self.assertEqual((P - 1) * 3, s["message_count"])
        self.assertQuoted(f"3 MiB is 3 segments, {(P - 1) * 3} messages", ("answers",))

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 6)


    def test_the_grading_sheet_grades_formula_answers(self):
        for student in ("alice", "bob"):
            with self.subTest(student=student):
                sheet, values = labs_common.student_sheet("lab1", student)
                p, b, o, s, n = (labs_common.si(values[k]) for k in ("p", "B", "o", "s", "n"))
                alpha, steps = 2 * labs_common.si(values["lat"]), math.ceil(math.log2(p))
                c = o + alpha
                pipeline = (math.ceil(n / s) + p - 2) * (c + s / b)
                answers = {"q1": steps * (c + 4 / b), "q2": alpha + max(o + (p - 1) * 4 / b, (p - 1) * o + 4 / b),
                           "q3": (steps - 1) * c * b / (p - 1 - steps), "q4": pipeline,
                           "q6": steps * (c + n / b) / pipeline,
                           "q7": ((p - 2) * (c + s / b) - steps * c) / (steps / b - (c + s / b) / s)}
                # the measurement as a student reads it off the run the sheet prints
                answers["q5"] = labs_common.summary(labs_common.run_sheet_command(sheet, "pipeline"), "simulated time")
                self.assertClose(pipeline, answers["q5"], rel=1e-5)
                self.assertGradedRight("lab1", student, answers)
                self.assertGradedWrong("lab1", student, answers, "q7", 1.02)

    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
