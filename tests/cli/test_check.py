"""`collsim check`: each student's parameters follow from their name (the same every time,
different between students), and answer files are graded against values this test computes
itself from the alpha-beta formulas of lab 2 (docs/labs/lab2-bandwidth-optimality.md): right
answers pass, a value off by more than the stated tolerance fails, a missing one is missing,
bad files are refused in one line.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest -v test_check   (from tests/cli)
"""
import csv
import json
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

UNITS = {"MiB": 2**20, "GBps": 1e9, "us": 1e-6, "ns": 1e-9}


def quantity(text):
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", text).groups()
    return float(number) * UNITS[unit]


def check(*args):
    return subprocess.run([COLLSIM, "check", *map(str, args)], capture_output=True, text=True, timeout=120)


def parameters(student):
    """The student's p, n, B and link latency, as their sheet prints them."""
    line = check("lab2", "--student", student).stdout.splitlines()[1]
    values = dict(part.split(" = ") for part in line.split(": ", 1)[1].split(", "))
    return int(values["p"]), quantity(values["n"]), quantity(values["B"]), quantity(values["lat"])


def lab2_answers(p, n, b, latency):
    """Every answer of lab 2's sheet from the formulas (the ring's chunk n/p in whole carried
    elements changes nothing at these sizes: the tolerances are 0.1% and more)."""
    alpha = 2 * latency
    ring = 2 * (p - 1) * (alpha + n / (p * b))
    naive = 2 * (alpha + (p - 1) * n / b)
    return {"q1": f"{ring * 1e3:.6g} ms", "q2": naive, "q3": f"{ring * 1e6:.6g} us", "q4": f"{naive / ring:.5g}",
            "q5": f"{2 * (p - 1) / p * n / ring / 1e9:.5g} GB/s", "q6": f"{100 * (ring / (2 * n / b) - 1):.4g}%",
            "q7": 2**20 / (alpha * b)}


class CheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-check-")
        cls.tmp = Path(cls.folder.name)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def write(self, name, student, answers, lab="lab2"):
        path = self.tmp / name
        path.write_text(json.dumps({"lab": lab, "student": student, "answers": answers}))
        return path

    def test_parameters_follow_from_the_name(self):
        self.assertEqual(parameters("alice"), parameters("alice"))
        seen = {parameters(name) for name in ("alice", "bob", "carol", "dave", "erin", "frank")}
        self.assertGreaterEqual(len(seen), 4)  # copying a neighbour's answers does not work
        sheet = check("lab2", "--student", "bob").stdout
        p, n, b, latency = parameters("bob")
        self.assertIn(f"--set topology=star:{p}:", sheet)
        self.assertIn(f"--set workers={p} --set collective.algorithm=ring", sheet)
        template = json.loads(check("lab2", "--student", "bob", "--template").stdout)
        self.assertEqual({"lab": "lab2", "student": "bob", "answers": {f"q{i}": "" for i in range(1, 8)}}, template)

    def test_right_answers_pass_and_wrong_ones_fail(self):
        right = self.write("alice.json", "alice", lab2_answers(*parameters("alice")))
        done = check("lab2", right)
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)
        self.assertIn("7 of 7 right", done.stdout)
        self.assertNotIn("expected", done.stdout)  # the values stay hidden without --reveal
        # bob hands in alice's answers: his parameters differ, so do the answers
        if parameters("bob") != parameters("alice"):
            copied = self.write("bob.json", "bob", lab2_answers(*parameters("alice")))
            self.assertEqual(1, check("lab2", copied).returncode)
        # a measurement 1% off (tolerance 0.1%), a prediction missing, one unreadable
        answers = lab2_answers(*parameters("carol"))
        p, n, b, latency = parameters("carol")
        # the simulated ring cuts whole float32 elements: the largest chunk, ceil(n/4/p) of them, paces each step
        ring = 2 * (p - 1) * (2 * latency + -(-int(n) // 4 // p) * 4 / b)
        answers.update(q3=ring * 1.01, q2="", q5="fast")
        wrong = self.write("carol.json", "carol", answers)
        gradebook = self.tmp / "grades.csv"
        done = check("lab2", right, wrong, "--csv", gradebook, "--reveal")
        self.assertEqual(1, done.returncode)
        lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  q")}
        self.assertRegex(lines["q3"], r"WRONG .*1% off, tolerance 0\.1%")
        self.assertRegex(lines["q2"], r"missing")
        self.assertRegex(lines["q5"], r"WRONG +unreadable")
        self.assertIn("4 of 7 right", done.stdout)
        self.assertIn("expected", done.stdout)
        rows = list(csv.DictReader(gradebook.open()))
        self.assertEqual([("alice", "7"), ("carol", "4")], [(r["student"], r["right"]) for r in rows])
        self.assertEqual(["WRONG", "missing"], [rows[1]["q3"], rows[1]["q2"]])

    def test_bad_input_is_one_line(self):
        cases = [(["lab99"], "lab: no grading sheet 'lab99'"),
                 ([self.tmp / "none.json"], "none.json"),
                 ([self.write("typo.json", "x", {"q99": 1})], "'q99' is not a question of lab2"),
                 ([self.write("other.json", "x", {}, lab="lab3")], 'answers "lab3", not lab2'),
                 ([], "--student: give the student's name")]
        for args, says in cases:
            with self.subTest(args=args):
                done = check("lab2", *args) if args and args[0] != "lab99" else check(*(args or ["lab2"]))
                self.assertEqual(2, done.returncode, done.stderr)
                self.assertIn(says, done.stderr)
                self.assertEqual(1, len(done.stderr.strip().splitlines()))


if __name__ == "__main__":
    unittest.main()
