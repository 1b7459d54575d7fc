"""Lab 5 (docs/labs/lab5-why-scaling-is-not-linear.md): the page's commands run as a
student runs them, and every figure the page quotes is checked against the runs and
against the recurrence of docs/training.md written out here.

    COLLSIM=build/collsim python3 -m unittest test_lab5 -v   (from tests/cli)
"""
import re
import unittest

import labs_common
from labs_common import figures_in_page, rows_of

PAGE = "lab5-why-scaling-is-not-linear.md"
F, BK = 123.333333e-3, 246.666667e-3       # forward and backward of one iteration
N = 1.2e9                                  # bytes of gradients
BUCKET, BUCKETS = 50e6, 24                 # two 25 MB layers per 25 MiB bucket
ALPHA_IN, B_IN = 1e-6, 10e9                # inside a node: two 0.5 us GPU links, 10 GB/s
ALPHA_OUT, B_OUT = 5e-6, 6e9               # between nodes: the NICs, 6 GB/s


def ring(m, p):
    alpha, b = (ALPHA_IN, B_IN) if p <= 8 else (ALPHA_OUT, B_OUT)
    return 2 * (p - 1) * (alpha + m / (p * b))


def iteration_with_buckets(p):
    c = ring(BUCKET, p)
    if c < BK / BUCKETS:
        return F + BK + c                  # every bucket but the last hides
    return F + BK / BUCKETS + BUCKETS * c  # the stream is busy from the first bucket on


def figure(output, label):
    match = re.search(rf"^  {label}\s+([0-9.]+) (ms|us|s)\b", output, re.M)
    value = float(match.group(1))
    return value * {"ms": 1e-3, "us": 1e-6, "s": 1}[match.group(2)]


# the model, the platform and the bucket cap: inputs, not results
GIVEN = {"0.5 us", "1 us", "2 us", "5 us", "1.2 GB", "10 GB/s", "6 GB/s", "25 MiB", "50 MB", "370 ms", "40x"}


class Lab5(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = list(labs_common.run_lab_commands(PAGE).values())
        cls.page = figures_in_page(PAGE)
        cls.rows = {(int(r["workers"]), r["training.bucket"]): r for r in rows_of("lab5-scaling.csv")}

    def row(self, p, buckets):
        return self.rows[(p, "26214400" if buckets else "2147483648")]

    def test_two_nodes_with_buckets(self):
        out = self.outputs[0]
        # the buckets' carried slices round to whole elements (262144 / 24), hence 1e-3
        self.assertClose(iteration_with_buckets(16), figure(out, "iteration"), rel=1e-3)
        self.assertGreater(ring(BUCKET, 16), BK / BUCKETS)
        self.assertIn(f"30 (5 us + 50 MB / (16 x 6 GB/s)) = {ring(BUCKET, 16) * 1e3:.3f} ms", self.page)
        self.assertIn(f"= {iteration_with_buckets(16) * 1e3:.1f} ms", self.page)
        exposed = iteration_with_buckets(16) - F - BK
        self.assertIn(f"{exposed * 1e3:.1f} ms of communication is exposed", self.page)
        self.assertIn(f"{100 * (1 - exposed / (BUCKETS * ring(BUCKET, 16))):.1f}% hidden", self.page)

    def test_two_nodes_without_buckets(self):
        expected = F + BK + ring(N, 16)
        self.assertClose(expected, figure(self.outputs[1], "iteration"), rel=1e-9)
        self.assertIn(f"= {expected * 1e3:.2f} ms", self.page)

    def test_inside_a_node_all_buckets_but_the_last_hide(self):
        for p in (2, 4, 8):
            with self.subTest(p=p):
                self.assertLess(ring(BUCKET, p), BK / BUCKETS)
                self.assertClose(23 / 24, float(self.row(p, True)["overlap_fraction"]), rel=1e-3)
                self.assertClose(F + BK + ring(N, p), float(self.row(p, False)["iteration_time"]), rel=1e-9)
        self.assertIn(f"= {ring(BUCKET, 8) * 1e3:.3f} ms < 10.28 ms", self.page)
        self.assertIn("(95.8%)", self.page)

    def test_speed_ups_over_one_gpu(self):
        one = float(self.row(1, False)["samples_per_second"])
        self.assertClose(32 / (F + BK), one, rel=1e-6)
        self.assertIn(f"{one:.1f} samples/s", self.page)
        for p, digits in ((8, 1), (40, 0)):
            for buckets in (True, False):
                ratio = float(self.row(p, buckets)["samples_per_second"]) / one
                self.assertIn(f"{ratio:.{digits}f}x", self.page)

    def test_forward_and_backward(self):
        self.assertIn(f"F = {370 / 3:.1f} ms forward, Bk = {2 * 370 / 3:.1f} ms backward", self.page)
        self.assertClose(370e-3 / 3, F)
        self.assertClose(2 * 370e-3 / 3, BK)

    def test_across_nodes_the_stream_falls_behind(self):
        for p in (16, 24, 32, 40):
            with self.subTest(p=p):
                self.assertClose(iteration_with_buckets(p), float(self.row(p, True)["iteration_time"]), rel=1e-3)
                self.assertClose(F + BK + ring(N, p), float(self.row(p, False)["iteration_time"]), rel=1e-9)
                # "about 60%": 60% to the nearest ten
                self.assertEqual(6, round(10 * float(self.row(p, True)["overlap_fraction"])))
        self.assertIn("about 60% stays hidden", self.page)
        exposed_40 = iteration_with_buckets(40) - F - BK
        self.assertIn(f"about {exposed_40 * 1e3:.0f} ms at 40 GPUs", self.page)


    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)


if __name__ == "__main__":
    unittest.main()
