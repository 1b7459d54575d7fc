"""Lab 5 (docs/labs/lab5-why-scaling-is-not-linear.md): the page's commands run as a
student runs them, and every figure the page and its answers (answers-lab5.md) quote is
checked against the runs and against the recurrence of docs/training.md written out here;
the pictures are the commands' output, and the grading sheet (docs/labs/grading/lab5.json)
grades right the answers a student computes from these formulas and reads off the runs.

    COLLSIM=build/collsim python3 -m unittest test_lab5 -v   (from tests/cli)
"""
import re
import unittest

import labs_common
from labs_common import figures_in_page, rows_of

PAGE = "lab5-why-scaling-is-not-linear.md"
ANSWERS = "answers-lab5.md"
F, BK = 123.333333e-3, 246.666667e-3       # forward and backward of one iteration
N = 1.2e9                                  # bytes of gradients
BUCKET, BUCKETS = 50e6, 24                 # two 25 MB layers per 25 MiB bucket
ALPHA_IN, B_IN = 1e-6, 10e9                # inside a node: two 0.5 us GPU links, 10 GB/s
ALPHA_OUT, B_OUT = 5e-6, 6e9               # between nodes: the NICs, 6 GB/s


def ring(m, p, nodes=None, nic=B_OUT):
    """The ring over p GPUs: inside one node (p <= 8 unless `nodes` says), else across NICs of `nic`."""
    alpha, b = (ALPHA_IN, B_IN) if (nodes or (1 if p <= 8 else 2)) == 1 else (ALPHA_OUT, nic)
    return 2 * (p - 1) * (alpha + m / (p * b))


def iteration_with_buckets(p, nodes=None, nic=B_OUT):
    c = ring(BUCKET, p, nodes, nic)
    if c < BK / BUCKETS:
        return F + BK + c                  # every bucket but the last hides
    return F + BK / BUCKETS + BUCKETS * c  # the stream is busy from the first bucket on


def figure(output, label):
    match = re.search(rf"^  {label}\s+([0-9.]+) (ms|us|s)\b", output, re.M)
    value = float(match.group(1))
    return value * {"ms": 1e-3, "us": 1e-6, "s": 1}[match.group(2)]


# the model, the platform and the bucket cap: inputs, not results
GIVEN = {"0.5 us", "1 us", "2 us", "5 us", "1.2 GB", "10 GB/s", "6 GB/s", "25 MiB", "50 MB", "370 ms", "40x", "2 GiB"}


class Lab5(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = list(labs_common.run_lab_commands(PAGE).values())
        cls.page = figures_in_page(PAGE)
        cls.answers = figures_in_page(ANSWERS)
        cls.rows = {(int(r["workers"]), r["training.bucket"]): r for r in rows_of("lab5-scaling.csv")}

    def row(self, p, buckets):
        return self.rows[(p, "26214400" if buckets else "2147483648")]

    def test_two_nodes_with_buckets(self):
        out = self.outputs[0]
        # the buckets' carried slices round to whole elements (262144 / 24), hence 1e-3
        self.assertClose(iteration_with_buckets(16), figure(out, "iteration"), rel=1e-3)
        self.assertGreater(ring(BUCKET, 16), BK / BUCKETS)
        self.assertIn(f"30 (5 us + 50 MB / (16 x 6 GB/s)) = {ring(BUCKET, 16) * 1e3:.3f} ms", self.answers)
        self.assertIn(f"= {iteration_with_buckets(16) * 1e3:.1f} ms", self.answers)
        exposed = iteration_with_buckets(16) - F - BK
        self.assertIn(f"{exposed * 1e3:.1f} ms of communication is exposed", self.answers)
        self.assertIn(f"{100 * (1 - exposed / (BUCKETS * ring(BUCKET, 16))):.1f}% hidden", self.answers)

    def test_two_nodes_without_buckets(self):
        expected = F + BK + ring(N, 16)
        self.assertClose(expected, figure(self.outputs[1], "iteration"), rel=1e-9)
        self.assertIn(f"= {expected * 1e3:.2f} ms", self.answers)

    def test_inside_a_node_all_buckets_but_the_last_hide(self):
        for p in (2, 4, 8):
            with self.subTest(p=p):
                self.assertLess(ring(BUCKET, p), BK / BUCKETS)
                self.assertClose(23 / 24, float(self.row(p, True)["overlap_fraction"]), rel=1e-3)
                self.assertClose(F + BK + ring(N, p), float(self.row(p, False)["iteration_time"]), rel=1e-9)
        self.assertIn(f"= {ring(BUCKET, 8) * 1e3:.3f} ms < 10.28 ms", self.answers)
        self.assertIn("(95.8%)", self.answers)

    def test_speed_ups_over_one_gpu(self):
        one = float(self.row(1, False)["samples_per_second"])
        self.assertClose(32 / (F + BK), one, rel=1e-6)
        self.assertIn(f"{one:.1f} samples/s", self.answers)
        for p, digits in ((8, 1), (40, 0)):
            for buckets in (True, False):
                ratio = float(self.row(p, buckets)["samples_per_second"]) / one
                self.assertIn(f"{ratio:.{digits}f}x", self.answers)

    def test_forward_and_backward(self):
        for where in (self.page, self.answers):
            self.assertIn(f"F = {370 / 3:.1f} ms forward, Bk = {2 * 370 / 3:.1f} ms backward", where)
        self.assertClose(370e-3 / 3, F)
        self.assertClose(2 * 370e-3 / 3, BK)

    def test_across_nodes_the_stream_falls_behind(self):
        for p in (16, 24, 32, 40):
            with self.subTest(p=p):
                self.assertClose(iteration_with_buckets(p), float(self.row(p, True)["iteration_time"]), rel=1e-3)
                self.assertClose(F + BK + ring(N, p), float(self.row(p, False)["iteration_time"]), rel=1e-9)
                # "about 60%": 60% to the nearest ten
                self.assertEqual(6, round(10 * float(self.row(p, True)["overlap_fraction"])))
        self.assertIn("about 60% stays hidden", self.answers)
        exposed_40 = iteration_with_buckets(40) - F - BK
        self.assertIn(f"about {exposed_40 * 1e3:.0f} ms at 40 GPUs", self.answers)


    def test_the_pictures_runs(self):
        one_node, two_nodes = self.outputs[2], self.outputs[3]
        c_in, c_out = ring(BUCKET, 4, nodes=1), ring(BUCKET, 4, nodes=2)
        self.assertLess(c_in, BK / BUCKETS)
        self.assertGreater(c_out, BK / BUCKETS)
        self.assertClose(F + BK + c_in, figure(one_node, "iteration"), rel=1e-3)
        self.assertClose(iteration_with_buckets(4, nodes=2), figure(two_nodes, "iteration"), rel=1e-3)
        self.assertIn(f"6 (1 us + 50 MB / (4 x 10 GB/s)) = {c_in * 1e3:.3f} ms < 10.28 ms", self.answers)
        self.assertIn(f"(iteration {(F + BK + c_in) * 1e3:.3f} ms)", self.answers)
        self.assertIn(f"6 (5 us + 50 MB / (4 x 6 GB/s)) = {c_out * 1e3:.3f} ms > 10.28 ms", self.answers)
        self.assertIn(f"24 x {c_out * 1e3:.3f} = {iteration_with_buckets(4, nodes=2) * 1e3:.1f} ms", self.answers)
        exposed = iteration_with_buckets(4, nodes=2) - F - BK
        self.assertRounds(f"{exposed * 1e3:.1f} ms", figure(two_nodes, "exposed comm"))
        self.assertIn(f"{exposed * 1e3:.1f} ms exposed, {100 * (1 - exposed / (BUCKETS * c_out)):.1f}% hidden", self.answers)
        self.assertIn(f"({100 * (1 - exposed / (BUCKETS * c_out)):.1f}% of the communication hidden", two_nodes)

    def test_the_table_and_the_plot(self):
        table = self.outputs[5]
        for p in (1, 8, 40):
            with self.subTest(p=p):
                row = self.row(p, True)
                self.assertRegex(table, rf"25 MiB +\S+ +{p} +.* {float(row['samples_per_second']):.6g} samples/s\n")
        plot = (labs_common.OUT / "lab5-scaling.svg").read_text()
        self.assertEqual(1, plot.count('class="ideal"'))  # both lines start at one GPU's figure: one ideal line
        self.assertIn("ideal scaling", plot)
        # where each line leaves the ideal one (more than 3% below it), as answer 5 says
        one = float(self.row(1, False)["samples_per_second"])
        leaves = {b: next(p for p in (1, 2, 4, 8, 16, 24, 32, 40)
                          if float(self.row(p, b)["samples_per_second"]) < 0.97 * p * one) for b in (True, False)}
        self.assertEqual({True: 16, False: 2}, leaves)
        self.assertIn("within 3% of the ideal one up to 8 GPUs and leaves it when the ring leaves the node (16 GPUs); "
                      "one bucket leaves it from 2 GPUs on", self.answers)

    def test_the_grading_sheet_grades_formula_answers_right(self):
        for student in ("alice", "dave"):
            with self.subTest(student=student):
                self.assert_graded_right(student)

    def assert_graded_right(self, student):
        sheet, values = labs_common.student_sheet("lab5", student)
        g, nic = int(values["g"]), labs_common.si(values["nic"])
        p = 2 * g
        c_node, c_two = ring(BUCKET, g, nodes=1), ring(BUCKET, p, nodes=2, nic=nic)
        two = iteration_with_buckets(p, nodes=2, nic=nic)
        whole = F + BK + ring(N, p, nodes=2, nic=nic)
        answers = {"q1": c_node, "q2": iteration_with_buckets(g, nodes=1), "q3": c_two, "q4": two, "q5": whole,
                   "q8": p * (F + BK) / two, "q9": p * (F + BK) / whole}
        # the measurements as a student reads them off the run the sheet prints for "two"
        out = labs_common.run_sheet_command(sheet, "two")
        answers["q6"] = figure(out, "exposed comm")
        answers["q7"] = float(re.search(r"\(([0-9.]+)% of the communication hidden", out).group(1)) / 100
        self.assertClose(two - F - BK, answers["q6"], rel=1e-2)
        self.assertGradedRight("lab5", student, answers)
        self.assertGradedWrong("lab5", student, answers, "q7", 1.01)

    def test_the_pictures_name_every_bucket(self):
        for name in ("lab5-buckets-one-node.svg", "lab5-buckets-two-nodes.svg"):
            with self.subTest(picture=name):
                svg = (labs_common.OUT / name).read_text()
                labels = re.findall(r'<text [^>]*style="fill:#ffffff">(b\d+)</text>', svg)
                self.assertEqual(sorted(f"b{i}" for i in range(BUCKETS) for _ in range(4)), sorted(labels))
                steps = BUCKETS * 2 * (4 - 1)  # each bucket's ring over 4 GPUs: 2(p-1) steps of p messages
                self.assertIn(f"{4 * steps} messages in {steps} steps", svg)  # drawn by step, not by message

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 3)

    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
