"""Lab 9 (docs/labs/lab9-training-with-parameter-servers.md): the page's commands run as a
student runs them, and every figure the page and its answers (answers-lab9.md) quote is
checked against the runs and against the dedicated servers' and the ring's formulas written
out here; the picture is the commands' output; the grading sheet (docs/labs/grading/lab9.json)
grades right the answers a student computes from these formulas and reads off the runs.

    COLLSIM=build/collsim python3 -m unittest test_lab9 -v   (from tests/cli)
"""
import unittest

import labs_common
from labs_common import summary
from labs_common import fmt_time, rows_of

PAGE = "lab9-training-with-parameter-servers.md"
ANSWERS = "answers-lab9.md"
ALPHA, B = 2e-6, 10e9  # star:64: two 1 us, 10 GB/s links per route
N = 30e6
C = 10e-3  # computation per iteration


def servers_of(p, ratio):
    return max(1, int(ratio * p + 0.5))


def ps(p, servers, n=N, b=B):
    return 2 * (ALPHA + max(p, servers) * n / (servers * b))


def ring(p, n=N, b=B):
    return 2 * (p - 1) * (ALPHA + n / (p * b))


def slow_ps(p, servers):
    """One slow worker computing 2C while the others compute C (servers <= p): the others'
    pushes share each server's link p - 1 ways from C and still have r bytes each to go at
    2C; then each server's link shares p pushes until the remainders are in (r p / B, in
    which the slow worker sends r of each of its S pushes too), and the slow worker's own
    link carries the rest, n - S r, alone. Then the pull, p n / (S B)."""
    r = max(0.0, N / servers - C * B / (p - 1))
    push_end = 2 * C + ALPHA + r * p / B + (N - servers * r) / B
    return push_end + ALPHA + max(p, servers) * N / (servers * B)


# the platform, the size and the computation: inputs, not results
GIVEN = {"1 us", "2 us", "10 GB/s", "30 MB", "10 ms", "20 ms", "3 ms"}


class Lab9(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = list(labs_common.run_lab_commands(PAGE).values())
        cls.page = labs_common.figures_in_page(PAGE)
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.ratio = {float(r["collective.parameter_server.ratio"]): r for r in rows_of("lab9-ratio.csv")}
        cls.workers = {(float(r["collective.parameter_server.ratio"]), int(r["workers"])): r
                       for r in rows_of("lab9-workers.csv")}
        cls.ring_workers = {int(r["workers"]): r for r in rows_of("lab9-ring-workers.csv")}

    def test_four_servers_and_the_ring(self):
        self.assertRounds(fmt_time(ps(16, 4)), summary(self.outputs[0], "collective time"), ("page", "answers"))
        self.assertIn("collective/model = 1.000000", self.outputs[0])
        self.assertRounds(fmt_time(ring(16)), summary(self.outputs[1], "collective time"), ("page", "answers"))
        self.assertIn(f"{ps(16, 4) / ring(16):.1f} times the ring's", self.page)
        self.assertIn(f"an iteration takes {fmt_time(C + ps(16, 4))} against {fmt_time(C + ring(16))}", self.page)
        self.assertClose(2 * (C + ps(16, 4)), summary(self.outputs[0], "simulated time"))
        self.assertIn(f"T = 2 (2 us + 16 x 750 us) = {fmt_time(ps(16, 4))}, and an iteration 10 ms + "
                      f"{fmt_time(ps(16, 4))} = {fmt_time(C + ps(16, 4))}", self.answers)
        self.assertIn(f"The ring: 2 x 15 (2 us + 187.5 us) = {fmt_time(ring(16))}", self.answers)
        self.assertIn("16 shards of 7.5 MB", self.page)
        self.assertIn("16 shards of 7.5 MB", self.answers)

    def test_the_ratio_meets_the_ring_at_s_equal_p(self):
        for ratio, row in self.ratio.items():
            with self.subTest(ratio=ratio):
                self.assertEqual("true", row["verified"])
                self.assertClose(ps(16, servers_of(16, ratio)), float(row["collective_time"]))
        self.assertEqual({1, 2, 4, 8, 16}, {servers_of(16, r) for r in self.ratio})
        self.assertIn(f"{fmt_time(ps(16, 1))} with one server, {fmt_time(ps(16, 16))} with 16", self.page)
        gap = ps(16, 16) - ring(16)
        self.assertIn(f"still {gap * 1e6:.0f} us slower than the ring", self.page)
        self.assertIn(f"2n/B = {fmt_time(2 * N / B)} against the ring's 2(p-1)/p · n/B = {fmt_time(30 / 16 * N / B)}",
                      self.page)
        self.assertIn(f"At S = p = 16: 2 (2 us + 3 ms) = {fmt_time(ps(16, 16))}, where the ring takes {fmt_time(ring(16))}",
                      self.answers)
        lab8_gap = ring(16) - 2 * (ALPHA + 15 * N / 16 / B)
        self.assertIn(f"S = p is {lab8_gap * 1e6:.0f} us faster than the ring", self.answers)
        plot = (labs_common.OUT / "lab9-ratio.svg").read_text()
        self.assertIn(f"ring: {fmt_time(ring(16))}", plot)

    def test_over_p(self):
        for (ratio, p), row in self.workers.items():
            with self.subTest(ratio=ratio, p=p):
                self.assertClose(ps(p, servers_of(p, ratio)), float(row["collective_time"]))
        for p, row in self.ring_workers.items():
            with self.subTest(ring=p):
                self.assertClose(ring(p), float(row["collective_time"]))
        self.assertEqual({2, 4, 8, 16, 32}, set(self.ring_workers))
        self.assertIn(f"{fmt_time(ps(4, 1))} from 4 to 32 workers", self.page)
        self.assertEqual(ps(32, 8), ps(4, 1))
        self.assertIn(f"({fmt_time(ps(2, 1))} at 2 workers", self.page)
        self.assertIn(f"{fmt_time(ps(8, 8))} at every p with one per worker", self.page)
        self.assertIn(f"{fmt_time(ps(4, 1))} at every p from 4 to 32", self.answers)
        self.assertIn(f"{fmt_time(ps(8, 8))} at every p with one per worker", self.answers)
        self.assertIn(f"from {fmt_time(ring(2))} at 2 workers to {fmt_time(ring(32))} at 32", self.page)
        self.assertIn("at 32 workers, 8 more hosts, or 32 at S = p", self.answers)

    def test_a_slow_worker(self):
        ring_round = 2 * C + ring(16)
        ps_round = slow_ps(16, 4)
        self.assertClose(2 * ring_round, summary(self.outputs[-1], "simulated time"))
        self.assertClose(2 * ps_round, summary(self.outputs[-2], "simulated time"))
        # the servers' round lies between its lower bound (reached) and a slow compute plus a whole sum
        self.assertLess(ps_round, 2 * C + ps(16, 4))
        self.assertIn(f"grows by the whole 10 ms: {fmt_time(ring_round)}", self.page)
        self.assertIn(f"grows by only {(ps_round - C - ps(16, 4)) * 1e3:.0f} ms, to {fmt_time(ps_round)}", self.page)
        self.assertIn("2C + alpha + n/B + r (p - S)/B", self.page)
        pull = 16 * N / (4 * B)
        self.assertIn(f"the pull takes p n/(S B) = {fmt_time(pull)}", self.page)
        self.assertIn(f"20 ms + {fmt_time(ring(16))} = {fmt_time(ring_round)}", self.answers)
        # the answers' steps: the others' remainder r, its 16-way share, rank 5's rest alone
        r = N / 4 - C * B / 15
        self.assertIn(f"{r / 1e6:.3f} MB to go", self.answers)
        self.assertRounds("11.25 ms", 15 * N / 4 / B, "answers")  # the others' pushes alone
        self.assertRounds("1.333 ms", r * 16 / B, "answers")
        self.assertIn(f"30 MB - 4r = {(N - 4 * r) / 1e6:.2f} MB", self.answers)
        self.assertRounds("2.667 ms", (N - 4 * r) / B, "answers")
        self.assertRounds("1 ms", r * (16 - 4) / B, "answers")  # r (p - S) / B
        self.assertIn(f"+ 2 us + {fmt_time(pull)} = {fmt_time(ps_round)}, 2 ms more", self.answers)
        self.assertIn(f"{fmt_time(ps_round)} against {fmt_time(ring_round)}", self.answers)

    def test_the_grading_sheet_grades_formula_answers_right(self):
        for student in ("alice", "frank"):
            with self.subTest(student=student):
                sheet, values = labs_common.student_sheet("lab9", student)
                p, ratio = int(values["p"]), float(values["r"])
                n, b = labs_common.si(values["n"]), labs_common.si(values["B"])
                servers = servers_of(p, ratio)
                answers = {"q1": ps(p, servers, n, b), "q2": ring(p, n, b), "q4": ps(p, p, n, b),
                           "q5": C + ps(p, servers, n, b)}
                printed = {run: labs_common.run_sheet_command(sheet, run) for run in ("ps", "ring")}
                answers["q3"] = summary(printed["ps"], "collective time") / summary(printed["ring"], "collective time")
                self.assertClose(answers["q1"] / answers["q2"], answers["q3"], rel=1e-4)
                self.assertGradedRight("lab9", student, answers)
                self.assertGradedWrong("lab9", student, answers, "q3", 0.99)

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 1)

    def test_zz_every_figure_is_checked(self):
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
