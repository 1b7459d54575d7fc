"""Lab 7's student slot (docs/labs/lab7-write-your-own-allreduce.md): collsim built with a
student's file in it. tests/CMakeLists.txt builds two such programs from
tests/student/allreduce_ring_solution.cpp: COLLSIM_STUDENT_RING, a correct ring allreduce,
and COLLSIM_STUDENT_WRONG, the same ring one reduce-scatter step short. The right one runs
verified at the ring's formula and `collsim check lab7` grades it right on every question,
with answers computed here from the formula; the wrong one is caught by verification, and
the grader takes none of its figures. COLLSIM (the template's chain) is graded correct but
too slow, by the chain's formula.

The instructor's loop (docs/labs/instructor.md, "Grading lab 7") runs as written on two
submissions, alice's ring, bob's wrong ring and carol's binomial broadcast, with their answers: InstructorLoop with a
stand-in `cmake` that puts the programs built above in the loop's build folder (its shell,
paths, outputs and gradebook, cheaply); InstructorLoopBuilt (the heavy CTest
lab7_instructor_loop, LAB7_LOOP=build) in a copy of the repository with the real cmake, the
students' files compiled into collsim one after the other.

    COLLSIM=build/collsim COLLSIM_STUDENT_RING=build/tests/collsim_student_ring \\
    COLLSIM_STUDENT_WRONG=build/tests/collsim_student_wrong python3 -m unittest -v test_student   (from tests/cli)
"""
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, REPO

RING = os.path.abspath(os.environ.get("COLLSIM_STUDENT_RING", str(REPO / "build" / "tests" / "collsim_student_ring")))
WRONG = os.path.abspath(os.environ.get("COLLSIM_STUDENT_WRONG", str(REPO / "build" / "tests" / "collsim_student_wrong")))
BROADCAST = os.path.abspath(os.environ.get("COLLSIM_STUDENT_BROADCAST",
                                           str(REPO / "build" / "tests" / "collsim_student_broadcast")))
UNITS = {"KiB": 2**10, "MiB": 2**20, "GBps": 1e9}
ALPHA = 2e-6  # the sheet's platforms: star:P:B:1us, two links per route
CHECKS = ["p2", "p5", "p13", "max8", "speed", "model"]


def run(program, *args):
    return subprocess.run([program, *map(str, args)], capture_output=True, text=True, timeout=120)


def quantity(text):
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", text).groups()
    return float(number) * UNITS[unit]


def sheet_values(program, student, lab="lab7"):
    line = run(program, "check", lab, "--student", student).stdout.splitlines()[1]
    return dict(part.split(" = ") for part in line.split(": ", 1)[1].split(", "))


def parameters(program, student):
    """The student's p, n (bytes) and B (bytes/s), as their sheet prints them."""
    values = sheet_values(program, student)
    return int(values["p"]), quantity(values["n"]), quantity(values["B"])


def ring_time(p, elements, b, alpha=ALPHA):
    """2(p-1) steps, each as long as the largest chunk's message (float32 elements)."""
    return 2 * (p - 1) * (alpha + 4 * math.ceil(elements / p) / b)


def summary_time(output):
    number, unit = re.search(r"simulated time +([0-9.]+) (us|ms|s)\b", output).groups()
    return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def loop_section():
    text = (REPO / "docs" / "labs" / "instructor.md").read_text()
    return text[text.index("## Grading lab 7"):text.index("## Variations")]


def instructor_loop():
    """The loop the instructor's page gives, as written."""
    return re.search(r"```sh\n(.*?)```", loop_section(), re.S).group(1)


def loop_example_output():
    """The lines the page shows the loop printing."""
    return re.findall(r"```\w*\n(.*?)```", loop_section(), re.S)[1].splitlines()


def wrong_ring_source():
    """The ring one reduce-scatter step short, made as tests/CMakeLists.txt makes it."""
    ring = (REPO / "tests" / "student" / "allreduce_ring_solution.cpp").read_text()
    return ring.replace('step < p - 1; ++step) {\n    comm.label("reduce-scatter"',
                        'step < p - 2; ++step) {\n    comm.label("reduce-scatter"')


def submit(root):
    """submissions/ in `root`: alice's ring and bob's wrong ring, each with answers computed
    from the ring's formula for their own platform."""
    folder = root / "submissions"
    folder.mkdir()
    shutil.copy(REPO / "tests" / "student" / "allreduce_ring_solution.cpp", folder / "alice.cpp")
    (folder / "bob.cpp").write_text(wrong_ring_source())
    shutil.copy(REPO / "tests" / "student" / "broadcast_binomial_solution.cpp", folder / "carol.cpp")
    values = sheet_values(COLLSIM, "carol", "lab7-broadcast")
    t = math.ceil(math.log2(int(values["p"]))) * (ALPHA + quantity(values["n"]) / quantity(values["B"]))
    (folder / "carol.json").write_text(json.dumps({"lab": "lab7-broadcast", "student": "carol", "answers": {
        "q1": f"{t * 1e3:.6g} ms", "q2": f"{t * 1e3:.6g} ms", "q3": 1}}, indent=2))
    for student in ("alice", "bob"):
        p, n, b = parameters(COLLSIM, student)
        t = ring_time(p, n / 4, b)
        (folder / f"{student}.json").write_text(json.dumps({"lab": "lab7", "student": student, "answers": {
            "q1": f"{t * 1e3:.6g} ms", "q2": f"{t * 1e3:.6g} ms", "q3": f"{2 * (p - 1) / p * n / t / b:.5g}"}},
            indent=2))


class LoopChecks:
    """What the loop must give whichever way collsim is built."""

    def run_loop(self, root, env=None):
        done = subprocess.run(["bash", "-c", instructor_loop()], cwd=root, capture_output=True, text=True,
                              env=env, timeout=3600)
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)
        return done

    def assertLoopGrades(self, root, done):
        # what it prints is what the page shows, line for line
        self.assertEqual(loop_example_output(), done.stdout.splitlines(), done.stderr)
        import csv
        with open(root / "grades-lab7.csv") as table:
            rows = {row["student"]: row for row in csv.DictReader(table)}
        self.assertEqual({"alice", "bob"}, set(rows))
        self.assertEqual(("9", "9"), (rows["alice"]["right"], rows["alice"]["total"]))
        self.assertEqual(("1", "9"), (rows["bob"]["right"], rows["bob"]["total"]))
        self.assertEqual("WRONG", rows["bob"]["p5"])
        with open(root / "grades-lab7-broadcast.csv") as table:
            rows = {row["student"]: row for row in csv.DictReader(table)}
        self.assertEqual({"carol"}, set(rows))
        self.assertEqual(("8", "8", "right"), (rows["carol"]["right"], rows["carol"]["total"], rows["carol"]["speed"]))
        graded = (root / "submissions" / "bob.grade.txt").read_text()
        self.assertIn("gave a wrong result (verification failed)", graded)


STAND_IN_CMAKE = """#!/bin/sh
# cmake as the loop calls it: configuring records the student's file, building puts the
# program built from that file (by tests/CMakeLists.txt) in place
case " $* " in
  *" --build "*) case "$(cat build-lab7/student-file)" in
                   */alice.cpp) cp "$COLLSIM_STUDENT_RING" build-lab7/collsim ;;
                   */bob.cpp) cp "$COLLSIM_STUDENT_WRONG" build-lab7/collsim ;;
                   */carol.cpp) cp "$COLLSIM_STUDENT_BROADCAST" build-lab7/collsim ;;
                   *) exit 1 ;;
                 esac ;;
  *) mkdir -p build-lab7
     for word in "$@"; do
       case "$word" in -DCOLLSIM_STUDENT_FILE=*) echo "${word#*=}" > build-lab7/student-file ;; esac
     done ;;
esac
"""


class InstructorLoop(unittest.TestCase, LoopChecks):
    def test_the_loop_as_written_grades_a_class(self):
        with tempfile.TemporaryDirectory(prefix="collsim-lab7-loop-") as folder:
            root = Path(folder)
            submit(root)
            (root / "bin").mkdir()
            (root / "bin" / "cmake").write_text(STAND_IN_CMAKE)
            (root / "bin" / "cmake").chmod(0o755)
            env = dict(os.environ, PATH=f"{root / 'bin'}:{os.environ['PATH']}", COLLSIM_STUDENT_RING=RING,
                       COLLSIM_STUDENT_WRONG=WRONG, COLLSIM_STUDENT_BROADCAST=BROADCAST)
            self.assertLoopGrades(root, self.run_loop(root, env))


@unittest.skipUnless(os.environ.get("LAB7_LOOP") == "build", "builds collsim: the heavy CTest lab7_instructor_loop")
class InstructorLoopBuilt(unittest.TestCase, LoopChecks):
    def test_the_loop_as_written_builds_and_grades_a_class(self):
        with tempfile.TemporaryDirectory(prefix="collsim-lab7-loop-") as folder:
            root = Path(folder) / "collsim"
            shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".git", "build", "build-*", "out"))
            submit(root)
            self.assertLoopGrades(root, self.run_loop(root))


class StudentSlot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-student-")
        cls.tmp = Path(cls.folder.name)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def answers(self, student, p, n, b):
        """The three answers of the sheet for a ring, from its formula."""
        t = ring_time(p, n / 4, b)
        path = self.tmp / f"{student}.json"
        path.write_text(json.dumps({"lab": "lab7", "student": student, "answers": {
            "q1": f"{t * 1e3:.6g} ms", "q2": f"{t * 1e3:.6g} ms", "q3": f"{2 * (p - 1) / p * n / t / b:.5g}"}}))
        return path

    def graded(self, program, path):
        done = run(program, "check", "lab7", path)
        return done, dict(re.findall(r"^  (\w+) +\w+ +(right|WRONG|missing)", done.stdout, re.M))

    def test_the_slot_names_its_file(self):
        listed = run(RING, "list", "algorithms").stdout
        self.assertRegex(listed, r"allreduce +student +yours \(lab 7\), built from \S*allreduce_ring_solution\.cpp")
        self.assertRegex(run(COLLSIM, "list", "algorithms").stdout, r"allreduce +student +yours \(lab 7\): holds the template")
        # auto never chooses the slot, even where it would be the fastest
        plan = json.loads(run(RING, "validate", "--plan", "--workers", "8", "--size", "1MiB").stdout)
        self.assertNotIn("student", json.dumps(plan["algorithm"]["candidates"]))

    def test_a_ring_runs_verified_at_its_formula(self):
        for p, size, elements in [(2, "4KiB", 1024), (5, "4004B", 1001), (13, "1MiB", 2**18), (16, "16MiB", 2**22)]:
            with self.subTest(p=p, size=size):
                done = run(RING, "run", "--algorithm", "student", "--workers", p, "--topology", f"star:{p}",
                           "--size", size)
                self.assertEqual(0, done.returncode, done.stderr)
                self.assertIn(f"verified        yes ({p} ranks", done.stdout)
                self.assertIn("simulated/model = 1.000000", done.stdout)
                want = ring_time(p, elements, 10e9)
                self.assertLessEqual(abs(summary_time(done.stdout) - want), 5e-6 * want)

    def test_a_ring_is_graded_right(self):
        p, n, b = parameters(RING, "alice")
        done, statuses = self.graded(RING, self.answers("alice", p, n, b))
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)
        self.assertEqual({q: "right" for q in CHECKS + ["q1", "q2", "q3"]}, statuses, done.stdout)
        self.assertIn("9 of 9 right", done.stdout)

    def test_a_wrong_ring_is_caught_by_verification(self):
        done = run(WRONG, "run", "--algorithm", "student", "--workers", 5, "--size", "1MiB")
        self.assertEqual(1, done.returncode)
        line = done.stderr.strip()
        self.assertEqual(1, len(line.splitlines()), done.stderr)
        self.assertRegex(line, r"^collsim: verification failed: rank 0 element 0: got \S+, expected \S+")
        page = (REPO / "docs" / "labs" / "lab7-write-your-own-allreduce.md").read_text()
        self.assertIn(line, page)  # the line the lab shows is this run's, word for word

    def test_a_wrong_ring_gets_none_of_its_figures_graded(self):
        p, n, b = parameters(WRONG, "alice")
        done, statuses = self.graded(WRONG, self.answers("alice", p, n, b))
        self.assertEqual(1, done.returncode)
        # every correctness check fails; its time, however close, is not taken; the
        # prediction comes from the model and stays right
        self.assertEqual({**{q: "WRONG" for q in CHECKS + ["q2", "q3"]}, "q1": "right"}, statuses, done.stdout)
        self.assertIn("gave a wrong result (verification failed)", done.stdout)

    def test_the_template_is_correct_but_slow(self):
        p, n, b = parameters(COLLSIM, "bob")
        done, statuses = self.graded(COLLSIM, self.answers("bob", p, n, b))
        self.assertEqual(1, done.returncode)
        self.assertEqual({**{q: "right" for q in ["p2", "p5", "p13", "max8", "model"]}, "speed": "WRONG", "q1": "WRONG",
                          "q2": "WRONG", "q3": "WRONG"}, statuses, done.stdout)
        chain = 2 * (p - 1) * (ALPHA + n / b)
        self.assertIn(f"{chain / ring_time(p, n / 4, b):.4g} (wanted at most 1.05)", done.stdout)


class StudentBroadcast(unittest.TestCase):
    """tests/student/broadcast_binomial_solution.cpp in the slot, graded by lab7-broadcast."""

    def graded(self, program, student):
        values = sheet_values(program, student, "lab7-broadcast")
        p, n, b = int(values["p"]), quantity(values["n"]), quantity(values["B"])
        t = math.ceil(math.log2(p)) * (ALPHA + n / b)  # a binomial tree: ceil(log2 p) whole messages
        with tempfile.TemporaryDirectory(prefix="collsim-student-") as folder:
            path = Path(folder) / f"{student}.json"
            path.write_text(json.dumps({"lab": "lab7-broadcast", "student": student, "answers": {
                "q1": f"{t * 1e3:.6g} ms", "q2": f"{t * 1e3:.6g} ms", "q3": 1}}))
            done = run(program, "check", "lab7-broadcast", path)
        return done, dict(re.findall(r"^  (\w+) +\w+ +(right|WRONG|missing)", done.stdout, re.M))

    def test_a_binomial_broadcast_is_graded_right(self):
        self.assertRegex(run(BROADCAST, "list", "algorithms").stdout,
                         r"broadcast +student +yours \(lab 7\), built from \S*broadcast_binomial_solution\.cpp")
        for student in ("alice", "erin"):
            with self.subTest(student=student):
                done, statuses = self.graded(BROADCAST, student)
                self.assertEqual(0, done.returncode, done.stdout + done.stderr)
                self.assertEqual(["right"] * 8, list(statuses.values()), done.stdout)

    def test_the_template_chain_is_correct_but_slow(self):
        values = sheet_values(COLLSIM, "alice", "lab7-broadcast")
        p = int(values["p"])
        done, statuses = self.graded(COLLSIM, "alice")
        self.assertEqual(1, done.returncode)
        self.assertEqual({**{q: "right" for q in ["p2", "p5", "p13", "model"]}, "speed": "WRONG", "q1": "WRONG",
                          "q2": "WRONG", "q3": "WRONG"}, statuses, done.stdout)
        # the chain's p-1 whole messages against the tree's ceil(log2 p)
        self.assertIn(f"{(p - 1) / math.ceil(math.log2(p)):.4g} (wanted at most 1.05)", done.stdout)


if __name__ == "__main__":
    unittest.main()
