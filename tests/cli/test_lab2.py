"""Lab 2 (docs/labs/lab2-bandwidth-optimality.md): the page's commands run as a student
runs them, and every figure the page and its answers (docs/labs/answers-lab2.md) quote is
checked against the runs and against the formulas written out here.

    COLLSIM=build/collsim python3 -m unittest test_lab2 -v   (from tests/cli)
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

PAGE = "lab2-bandwidth-optimality.md"
ANSWERS = "answers-lab2.md"
ALPHA, B = 2e-6, 10e9          # star:P: two 1 us, 10 GB/s links per route
MiB = 1 << 20
N = 64 * MiB
PS = [2, 4, 8, 16, 32, 64, 128, 256]


def ring_bandwidth(p, n=N):
    return 2 * (p - 1) / p * n / B


def ring_latency(p):
    return 2 * (p - 1) * ALPHA


def ring(p, n=N):
    return 2 * (p - 1) * (ALPHA + n / (p * B))


def naive(p, n=N):
    return 2 * (ALPHA + (p - 1) * n / B)


def busbw(p, t, n=N):
    return 2 * (p - 1) / p * n / t




def fmt_rate(bytes_per_second, digits=4):
    if bytes_per_second >= 1e9:
        return f"{bytes_per_second / 1e9:#.{digits}g} GB/s"
    return f"{bytes_per_second / 1e6:#.{digits}g} MB/s"


def fmt_ratio(r):
    return f"{r:.2f}" if r < 10 else f"{r:.1f}" if r < 100 else f"{r:.0f}"


def size_of(text):
    """A size as the results table writes it: bytes for a range, as written for a list."""
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * factor)
    return int(text)






# the platform and the sizes: inputs, not results
GIVEN = {"1 us", "2 us", "10 GB/s", "1 MiB", "64 MiB"}


class Lab2(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = labs_common.run_lab_commands(PAGE)
        cls.page = labs_common.figures_in_page(PAGE) + " " + labs_common.section_text(ANSWERS, "What the runs show")
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.main = {(r["collective.algorithm"], int(r["workers"])): r for r in rows_of("lab2.csv")}
        cls.sizes = {(size_of(r["collective.size"]), int(r["workers"])): r for r in rows_of("lab2-ring-sizes.csv")}
        cls.p52 = json.loads((OUT / "lab2-ring-1MiB-p52.json").read_text())
        cls.p53 = json.loads((OUT / "lab2-ring-1MiB-p53.json").read_text())

    def time(self, algorithm, p):
        return float(self.main[(algorithm, p)]["collective_time"])

    def test_every_point_equals_its_formula(self):
        self.assertEqual({(a, p) for a in ("naive", "ring") for p in PS}, set(self.main))
        self.assertEqual({(n, p) for n in (MiB, N) for p in PS}, set(self.sizes))
        for (algorithm, p), row in self.main.items():
            with self.subTest(algorithm=algorithm, p=p):
                self.assertEqual("ok", row["status"])
                self.assertEqual("true", row["verified"])
                want = ring(p) if algorithm == "ring" else naive(p)
                self.assertClose(want, float(row["collective_time"]))
                self.assertClose(want, float(row["model_time"]))
                self.assertClose(busbw(p, want), float(row["busbw"]))
        for (n, p), row in self.sizes.items():
            with self.subTest(size=n, p=p):
                self.assertEqual("true", row["verified"])
                self.assertClose(ring(p, n), float(row["collective_time"]))
        self.assertQuoted("every point equals its formula to a relative 1e-6", ("page",))

    def test_the_table_is_the_simulated_time(self):
        lines = labs_common.page_text(ANSWERS).splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("| p |"))
        table = [line for line in lines[start + 2:] if line.startswith("| ")]
        self.assertEqual(len(PS), len(table))
        for line, p in zip(table, PS):
            cells = [c.strip() for c in line.strip("|").split("|")]
            with self.subTest(p=p):
                self.assertEqual(str(p), cells[0])
                self.assertEqual(fmt_time(naive(p)), cells[1])
                self.assertEqual(fmt_time(ring(p)), cells[2])
                self.assertEqual(fmt_ratio(naive(p) / ring(p)), cells[3])
                self.assertEqual(fmt_rate(busbw(p, ring(p))), cells[4])
                # and the run agrees
                self.assertEqual(fmt_ratio(self.time("naive", p) / self.time("ring", p)), cells[3])
                self.assertEqual(fmt_rate(float(self.main[("ring", p)]["busbw"])), cells[4])
                for cell in cells:
                    self.record(cell)

    def test_ring_levels_off_at_2n_over_B(self):
        p = 256
        t = self.time("ring", p)
        self.assertClose(ring_bandwidth(p) + ring_latency(p), t)   # the brief's "within 1%", exactly
        for figure in (fmt_time(t), fmt_time(ring_bandwidth(p)), fmt_time(ring_latency(p)), fmt_time(2 * N / B)):
            self.assertQuoted(figure)
        self.assertEqual(["14.3893 ms", "13.3693 ms", "1.02 ms", "13.4218 ms"],
                         [fmt_time(x) for x in (t, ring_bandwidth(p), ring_latency(p), 2 * N / B)])
        self.assertQuoted(f"{2 * (p - 1)} × 2 us", ("page",))
        above = t / (2 * N / B) - 1
        self.assertQuoted(f"{100 * above:.1f}% above 2n/B")
        # growth from p = 2 to p = 256
        ring_growth = t / self.time("ring", 2)
        naive_growth = self.time("naive", 256) / self.time("naive", 2)
        self.assertQuoted(f"grows {ring_growth:.2f} times, the naive allreduce's {naive_growth:.0f} times", ("page",))
        self.assertEqual(("2.14", "255"), (f"{ring_growth:.2f}", f"{naive_growth:.0f}"))
        # the ring's time increases with p, but stays below 2n/B + its latency term
        times = [self.time("ring", q) for q in PS]
        self.assertEqual(sorted(times), times)
        for q, tq in zip(PS, times):
            self.assertLess(tq, 2 * N / B + ring_latency(q))
        self.assertQuoted(fmt_time(self.time("naive", 256)))

    def test_naive_over_ring_grows_with_p(self):
        ratios = [self.time("naive", p) / self.time("ring", p) for p in PS]
        self.assertEqual(sorted(ratios), ratios)
        # close to p while the ring's latency is negligible, then falls behind p
        per_p = [r / p for r, p in zip(ratios, PS)]
        self.assertEqual(sorted(per_p, reverse=True), per_p)
        self.assertGreater(per_p[0], 0.999)
        self.assertQuoted(f"{fmt_ratio(ratios[-1])} at p = 256", ("page",))
        self.assertQuoted(f"the ratio is {fmt_ratio(ratios[-1])} rather than 256", ("answers",))
        self.assertQuoted("2.00, 4.00, 7.98", ("answers",))

    def test_busbw(self):
        p = 256
        ring_bus = float(self.main[("ring", p)]["busbw"])
        self.assertClose(B * N / (N + p * ALPHA * B), ring_bus)
        self.assertQuoted(fmt_rate(ring_bus))
        self.assertQuoted(f"{100 * ring_bus / B:.1f}% of B")
        missing = ring_latency(p) / ring(p)
        self.assertClose(1 - ring_bus / B, missing)
        self.assertQuoted(f"missing {100 * missing:.1f}% is the latency term", ("page",))
        self.assertQuoted(f"pays {100 * missing:.1f}% in latency", ("answers",))
        naive_bus = float(self.main[("naive", p)]["busbw"])
        for q in PS:   # busbw B/p and time in proportion to p-1, at every p
            self.assertClose(B / q, float(self.main[("naive", q)]["busbw"]), rel=1e-3)
            self.assertClose(2 * N / B, self.time("naive", q) / (q - 1), rel=1e-3)
        self.assertQuoted("naive climbs in proportion to p-1", ("page",))
        self.assertQuoted("the naive's falls as B/p", ("page",))
        self.assertQuoted(f"B/p, {fmt_rate(naive_bus)}", ("page",))
        self.assertQuoted(f"B/p = {fmt_rate(naive_bus)}", ("answers",))
        chunk = N // p
        self.assertQuoted(f"{chunk // 1024} KiB, {fmt_time(chunk / B)} on the wire", ("answers",))

    def test_latency_takes_over_at_p_52_for_1MiB(self):
        n = MiB
        # where the terms are equal the time is twice the bandwidth term, itself ~ the bound
        self.assertQuoted(f"efficiency 50% and busbw B/2 = {B / 2e9:g} GB/s", ("answers",))
        self.assertRounds("6.71089 ms", N / B, "answers")
        p_star = n / (ALPHA * B)
        self.assertQuoted(f"= {p_star:.1f}")
        self.assertEqual("52.4", f"{p_star:.1f}")
        for trace, p in ((self.p52, 52), (self.p53, 53)):
            s = trace["summary"]
            with self.subTest(p=p):
                self.assertEqual(p, trace["scenario"]["workers"])
                self.assertEqual(n, trace["scenario"]["collective"]["size"])
                # the ring's chunks are whole float32 elements of the vector, the largest ceil(n/4/p)
                # of them, whatever memory carries (docs/algorithms.md "Logical vs carried size")
                chunk = -(-(n // 4) // p) * 4
                self.assertClose(2 * (p - 1) * (ALPHA + chunk / B), s["collective_time"], rel=1e-9)
                # the formula's n/p is fractional: a chunk is at most 4 bytes larger (1e-4 here)
                self.assertClose(ring(p, n), s["collective_time"], rel=1e-4)
                self.assertClose(ring_bandwidth(p, n), s["lower_bound"])
                bandwidth, latency = ring_bandwidth(p, n), ring_latency(p)
                self.assertEqual(p < p_star, bandwidth > latency)
                self.assertQuoted(f"({fmt_time(bandwidth)})" if p == 52 else f"({fmt_time(latency)})", ("answers",))
                self.assertQuoted(fmt_time(bandwidth))
                self.assertQuoted(fmt_time(latency))
                efficiency = f"{100 * s['efficiency']:.1f}%"
                self.assertQuoted(efficiency)
                self.assertEqual(fmt_rate(B * n / (n + p * ALPHA * B), 3), fmt_rate(s["busbw"], 3))
                self.assertQuoted(fmt_rate(s["busbw"], 3))
        self.assertGreater(self.p52["summary"]["busbw"], B / 2)
        self.assertLess(self.p53["summary"]["busbw"], B / 2)
        self.assertQuoted(f"p = {N / (ALPHA * B):.0f} for 64 MiB", ("answers",))

    def test_busbw_depends_on_n_over_p(self):
        bus = {key: float(row["busbw"]) for key, row in self.sizes.items()}
        small = [bus[(MiB, p)] for p in PS]
        self.assertEqual(sorted(small, reverse=True), small)
        self.assertQuoted(f"falls from {fmt_rate(small[0])} at p = 2 to {fmt_rate(small[-1])} at p = 256", ("page",))
        self.assertEqual("1.700 GB/s", fmt_rate(small[-1]))
        self.assertGreater(small[4], B / 2)   # p = 32
        self.assertLess(small[5], B / 2)      # p = 64
        self.assertQuoted("falls through B/2 between p = 32 and p = 64", ("page",))
        self.assertGreaterEqual(min(bus[(N, p)] for p in PS), float(self.main[("ring", 256)]["busbw"]) * (1 - 1e-9))
        self.assertQuoted(f"stays at or above {fmt_rate(bus[(N, 256)])}", ("page",))
        # 512 KiB chunks both
        self.assertEqual(512 * 1024, MiB // 2)
        self.assertEqual(512 * 1024, N // 128)
        self.assertQuoted("(both 512 KiB chunks)", ("page",))
        self.assertClose(bus[(MiB, 2)], bus[(N, 128)], rel=1e-9)
        self.assertQuoted(f"both give {fmt_rate(bus[(N, 128)])}", ("page",))

    def test_rabenseifner_keeps_the_bandwidth_term_with_log_latency(self):
        # what the answers say to question 4
        p = 256
        with tempfile.TemporaryDirectory() as folder:
            trace = Path(folder) / "t.json"
            subprocess.run([COLLSIM, "run", "--algorithm", "rabenseifner", "--topology", f"star:{p}", "--size", "64MiB",
                            "--quiet", "--trace", str(trace)], cwd=REPO, check=True, timeout=120)
            s = json.loads(trace.read_text())["summary"]
        latency = 2 * math.log2(p) * ALPHA
        self.assertClose(latency + ring_bandwidth(p), s["collective_time"])
        self.assertLess(s["collective_time"], self.time("ring", p))
        self.assertQuoted(f"{fmt_time(latency)} of latency", ("answers",))
        self.assertQuoted(fmt_time(s["collective_time"]), ("answers",))

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 3)


    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
