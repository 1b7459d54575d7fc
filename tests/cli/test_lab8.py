"""Lab 8 (docs/labs/lab8-parameter-servers.md): the page's commands run as a student runs
them, and every figure the page and its answers (answers-lab8.md) quote is checked against
the runs and against the parameter server's and the ring's formulas written out here; the
pictures are the commands' output; the grading sheet (docs/labs/grading/lab8.json) grades
right the answers a student computes from these formulas and reads off the runs.

    COLLSIM=build/collsim python3 -m unittest test_lab8 -v   (from tests/cli)
"""
import re
import unittest

import labs_common
from labs_common import summary
from labs_common import fmt_time, rows_of

PAGE = "lab8-parameter-servers.md"
ANSWERS = "answers-lab8.md"
ALPHA, B = 2e-6, 10e9  # star:P: two 1 us, 10 GB/s links per route
N = 30e6


def ps(p, servers, n=N, b=B):
    return 2 * (ALPHA + (p - 1) * n / (servers * b))


def ring(p, n=N, b=B):
    return 2 * (p - 1) * (ALPHA + n / (p * b))


# the platform and the size: inputs, not results
GIVEN = {"1 us", "2 us", "10 GB/s", "30 MB"}


class Lab8(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = list(labs_common.run_lab_commands(PAGE).values())
        cls.page = labs_common.figures_in_page(PAGE)
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.servers = {int(r["collective.servers"]): r for r in rows_of("lab8-servers.csv")}
        cls.workers = {(r["collective.algorithm"], int(r["collective.servers"]), int(r["workers"])): r
                       for r in rows_of("lab8-workers.csv")}

    def test_the_three_runs(self):
        for index, want in enumerate((ps(16, 1), ps(16, 4), ring(16))):
            with self.subTest(run=index):
                self.assertRounds(fmt_time(want), summary(self.outputs[index], "simulated time"))
                self.assertIn("simulated/model = 1.000000", self.outputs[index])
        self.assertIn(f"n/B = {fmt_time(N / B)}", self.answers)
        self.assertIn(f"15 gradients of 30 MB come down it ({15 * N / 1e6:.0f} MB, {fmt_time(15 * N / B)} at 10 GB/s)",
                      self.answers)
        self.assertIn(f"T = 2 (2 us + 15 x {fmt_time(N / B)}) = {fmt_time(ps(16, 1))}", self.answers)
        self.assertIn(f"15 shards of {N / 4 / 1e6:g} MB each way: 2 (2 us + 15 x {fmt_time(N / 4 / B)}) = "
                      f"{fmt_time(ps(16, 4))}, {ps(16, 1) / ps(16, 4):.2f} times faster", self.answers)

    def test_servers_meet_the_ring_at_s_equal_p(self):
        for servers, row in self.servers.items():
            with self.subTest(servers=servers):
                self.assertEqual("true", row["verified"])
                self.assertClose(ps(16, servers), float(row["collective_time"]))
        self.assertLess(ps(16, 16), ring(16))
        self.assertIn(f"2 (2 us + 15 x {fmt_time(N / 16 / B)}) = {fmt_time(ps(16, 16))}, against the ring's "
                      f"{fmt_time(ring(16))}", self.answers)
        self.assertIn(f"2(p-1)/p · n/B = {fmt_time(30 / 16 * N / B)}", self.answers)
        self.assertIn(f"faster by {(ring(16) - ps(16, 16)) * 1e6:.0f} us because it pays alpha twice where the ring "
                      f"pays it 2(p-1) = {2 * 15} times", self.answers)
        plot = (labs_common.OUT / "lab8-servers.svg").read_text()
        self.assertIn(f"ring: {fmt_time(ring(16))}", plot)

    def test_over_p(self):
        for (algorithm, servers, p), row in self.workers.items():
            with self.subTest(algorithm=algorithm, servers=servers, p=p):
                want = ring(p) if algorithm == "ring" else ps(p, servers)
                self.assertClose(want, float(row["collective_time"]))
        self.assertEqual({4, 8, 16, 32}, {p for _, _, p in self.workers})
        self.assertIn(f"{fmt_time(ps(4, 1))} at 4 workers, {fmt_time(ps(32, 1))} at 32 ({ps(32, 1) / ps(4, 1):.1f} "
                      "times as long for 8 times as many workers)", self.answers)
        self.assertIn(f"{fmt_time(ring(4))} to {fmt_time(ring(32))}", self.answers)
        self.assertIn(f"tending to 2n/B = {fmt_time(2 * N / B)}", self.answers)
        self.assertIn(f"adds {2 * ALPHA * 1e6:.0f} us per worker", self.answers)
        self.assertRegex(self.outputs[6], rf"32 +ring +1 +{re.escape(fmt_time(ring(32)))}")

    def test_the_grading_sheet_grades_formula_answers_right(self):
        for student in ("alice", "frank"):
            with self.subTest(student=student):
                sheet, values = labs_common.student_sheet("lab8", student)
                p, servers = int(values["p"]), int(values["S"])
                n, b = labs_common.si(values["n"]), labs_common.si(values["B"])
                answers = {"q1": ps(p, servers, n, b), "q2": ring(p, n, b), "q4": ps(p, p, n, b)}
                printed = {run: labs_common.run_sheet_command(sheet, run) for run in ("ps", "ring")}
                answers["q3"] = summary(printed["ps"], "simulated time") / summary(printed["ring"], "simulated time")
                answers["q5"] = summary(printed["ps"], "busbw")
                self.assertClose(answers["q1"] / answers["q2"], answers["q3"], rel=1e-4)
                self.assertGradedRight("lab8", student, answers)
                self.assertGradedWrong("lab8", student, answers, "q3", 0.99)

    def test_the_legend_names_what_each_algorithm_reads(self):
        # the ring reads no servers setting: its legend entry says "ring", not "ring, servers 1"
        plot = (labs_common.OUT / "lab8-workers.svg").read_text()
        legend = re.findall(r'<text [^>]*>([^<]*)</text>', plot)
        self.assertIn("ring", legend)
        self.assertIn("parameter-server, servers 4", legend)
        self.assertEqual([], [t for t in legend if t.startswith("ring,")])

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 2)

    def test_zz_every_figure_is_checked(self):
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
