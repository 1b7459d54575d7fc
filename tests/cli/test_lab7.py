"""Lab 7 (docs/labs/lab7-write-your-own-allreduce.md), with the template in the student slot:
the page's commands run as a student runs them, and every figure the page and its answers
(docs/labs/answers-lab7.md) quote is checked against the runs and against the chain's and
the ring's formulas written out here. (tests/cli/test_student.py builds a student's ring and
a wrong ring into the slot and grades them.)

    COLLSIM=build/collsim python3 -m unittest test_lab7 -v   (from tests/cli)
"""
import json
import math
import re
import subprocess
import unittest

import labs_common
from labs_common import COLLSIM, REPO, fmt_time, rows_of

PAGE = "lab7-write-your-own-allreduce.md"
ANSWERS = "answers-lab7.md"
ALPHA, B = 2e-6, 10e9  # star:P: two 1 us, 10 GB/s links per route
N = 16 * 2**20
PS = [2, 4, 8, 16, 32]


def chain_allreduce(p, n=N):
    return 2 * (p - 1) * (ALPHA + n / B)


def chain_broadcast(p, n=N):
    return (p - 1) * (ALPHA + n / B)


def ring(p, n=N):
    return 2 * (p - 1) * (ALPHA + n / (p * B))


def binomial(p, n=N):
    return math.ceil(math.log2(p)) * (ALPHA + n / B)


def pipeline(p, n=N, segment=2**20):
    """Lab 1's pipelined broadcast, k = n/segment segments down the chain: k + p - 2 steps."""
    return (n // segment + p - 2) * (ALPHA + segment / B)


def summary_time(output):
    number, unit = re.search(r"simulated time +([0-9.]+) (us|ms|s)\b", output).groups()
    return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1}[unit]


# the platform and the sizes: inputs, not results
GIVEN = {"1 us", "2 us", "10 GB/s", "16 MiB", "4004 B"}


def template_in_slot():
    listed = subprocess.run([COLLSIM, "list", "algorithms"], capture_output=True, text=True, check=True).stdout
    return "holds the template's chain" in listed


@unittest.skipUnless(template_in_slot(), "collsim was built with a student's file in the slot (COLLSIM_STUDENT_FILE)")
class Lab7(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = labs_common.run_lab_commands(PAGE)
        # the page and what its runs show, which the answers page holds
        cls.page = labs_common.figures_in_page(PAGE) + " " + labs_common.section_text(ANSWERS, "What the runs show")
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.sweep = {(r["collective.algorithm"], int(r["workers"])): r for r in rows_of("lab7.csv")}

    def output(self, start):
        return next(out for command, out in self.outputs.items() if command.startswith(start))

    def test_the_runs_equal_their_formulas(self):
        runs = {"--algorithm student": chain_allreduce(16), "--algorithm ring": ring(16),
                "--collective broadcast --algorithm student": chain_broadcast(16),
                "--collective broadcast --algorithm binomial": binomial(16),
                "--collective broadcast --algorithm pipeline": pipeline(16)}
        for start, want in runs.items():
            with self.subTest(run=start):
                out = self.output("collsim run " + start)
                self.assertIn("verified        yes (16 ranks", out)
                self.assertIn("simulated/model = 1.000000", out)
                self.assertRounds(fmt_time(want), summary_time(out), "page")
        ratio = chain_allreduce(16) / ring(16)
        self.assertRounds(f"{ratio:.1f}", summary_time(self.output("collsim run --algorithm student"))
                          / summary_time(self.output("collsim run --algorithm ring")))
        self.assertIn(f"{ratio:.1f} times as long", self.page)
        self.assertIn(f"{ratio:.1f}, not 16", self.answers)

    def test_the_sweep_is_the_chain_and_the_ring(self):
        self.assertEqual({(a, p) for a in ("student", "ring") for p in PS}, set(self.sweep))
        for (algorithm, p), row in self.sweep.items():
            with self.subTest(algorithm=algorithm, p=p):
                self.assertEqual("true", row["verified"])
                want = chain_allreduce(p) if algorithm == "student" else ring(p)
                self.assertClose(want, float(row["collective_time"]))
                self.assertClose(want, float(row["model_time"]))
        self.assertIn(f"{fmt_time(chain_allreduce(32))} at p = 32", self.page)
        self.assertIn(f"levels off ({fmt_time(ring(32))})", self.page)
        shown = self.output("collsim sweep show")
        self.assertRegex(shown, rf"student +32 +{re.escape(fmt_time(chain_allreduce(32)))}")
        self.assertRegex(shown, rf"ring +32 +{re.escape(fmt_time(ring(32)))}")

    def test_answers(self):
        self.assertIn(f"n/B = {fmt_time(N / B)}", self.answers)
        self.assertIn(f"{fmt_time(ALPHA + N / B)} / {fmt_time(ALPHA + N / (16 * B))} = 15.7", self.answers)
        latency = 2 * 15 * ALPHA
        self.assertIn(f"latency term is {latency * 1e6:.0f} us of {fmt_time(ring(16))}", self.answers)
        self.assertIn(f"8 alpha ({8 * ALPHA * 1e6:.0f} us)", self.answers)
        # a broadcast: the chain, the tree, the pipeline in 1 MiB segments
        self.assertIn(f"15 (alpha + n/B) = {fmt_time(chain_broadcast(16))}", self.answers)
        self.assertIn(f"4 (alpha + n/B) = {fmt_time(binomial(16))}", self.answers)
        self.assertIn(f"(16 + 14) segment times of alpha + 1 MiB/B = {fmt_time(ALPHA + 2**20 / B)}, "
                      f"{fmt_time(pipeline(16))}, {binomial(16) / pipeline(16):.2f} times faster than the tree", self.answers)
        self.assertEqual(fmt_time(ring(16)), fmt_time(pipeline(16)))
        # even_chunk's chunks of 1001 elements over 5 ranks, as the answers list them
        chunks = [1001 // 5 + (1 if i < 1001 % 5 else 0) for i in range(5)]
        self.assertIn(", ".join(map(str, chunks)), self.answers)
        # the rabenseifner claim: the ring's bandwidth term with 2 log2 p alpha of latency
        out = subprocess.run([COLLSIM, "run", "--algorithm", "rabenseifner", "--workers", "16", "--topology", "star:16",
                              "--size", "16MiB"], capture_output=True, text=True, check=True).stdout
        self.assertClose(2 * 15 / 16 * N / B + 8 * ALPHA, summary_time(out), 1e-5)

    def test_the_verification_line_is_a_real_one(self):
        # the page quotes what a wrong ring prints; test_student.py runs that ring and
        # checks the line word for word
        self.assertIn("collsim: verification failed: rank 0 element 0: got", labs_common.page_text(PAGE))

    def test_the_graded_limits_are_the_sheets(self):
        sheet = json.loads((REPO / "docs" / "labs" / "grading" / "lab7.json").read_text())
        limits = {q["id"]: q.get("at_most") for q in sheet["questions"]}
        self.assertIn(f"at most {limits['speed'] * 100 - 100:.0f}% slower than the ring", self.page)
        self.assertIn(f"the schedule within {limits['model'] * 100:.0f}% of the simulation", self.page)
        broadcast = json.loads((REPO / "docs" / "labs" / "grading" / "lab7-broadcast.json").read_text())
        limit = next(q["at_most"] for q in broadcast["questions"] if q["id"] == "speed")
        self.assertIn(f"at most {limit * 100 - 100:.0f}% slower than the binomial tree", self.page)
        self.assertIn(f"the grader's yardstick (at most {limit * 100 - 100:.0f}% slower)", self.answers)
        runs = broadcast["runs"]
        self.assertEqual((5, "4004B", 3), tuple(runs["p5"]["set"][k] for k in ("workers", "collective.size", "collective.root")))
        self.assertIn("5 with 1001 elements (root 3) and 13 ranks (root 6)", self.page)
        self.assertEqual((13, 6), (runs["p13"]["set"]["workers"], runs["p13"]["set"]["collective.root"]))
        self.assertEqual({"p2": 2, "p5": 5, "p13": 13, "max8": 8},
                         {run: sheet["runs"][run]["set"]["workers"] for run in ("p2", "p5", "p13", "max8")})
        self.assertEqual("4004B", sheet["runs"]["p5"]["set"]["collective.size"])

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 1)

    def test_zz_every_figure_is_checked(self):
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
