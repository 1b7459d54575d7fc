"""What the lab tests share: a lab page's commands, run as a student would run them.

A lab page (docs/labs/*.md) gives its commands in ```sh blocks, one command per line, run
from the repository root; `collsim` is the built program. run_lab_commands() runs every
one of them and returns their stdout, so that each test then checks the page's claims
against what the commands produced. The commands run in a temporary folder that links to
the repository's scenarios/ and topologies/, so that their outputs (out/labs/) never land
in the source tree.
"""
import atexit
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, REPO

WORK = Path(tempfile.mkdtemp(prefix="collsim-labs-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
for folder in ("scenarios", "topologies"):
    (WORK / folder).symlink_to(REPO / folder)


def page_text(name):
    return (REPO / "docs" / "labs" / name).read_text()


def commands_of(name):
    """Every command line of the page's ```sh blocks, in order."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", page_text(name), re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def run_lab_commands(name, timeout=300):
    """Runs the page's commands as from the repository root; returns {command: stdout}."""
    outputs = {}
    for command in commands_of(name):
        words = shlex.split(command)
        if words[0] == "mkdir":
            (WORK / words[-1]).mkdir(parents=True, exist_ok=True)
            continue
        if words[0] != "collsim":
            raise AssertionError(f"{name}: a lab command must start with collsim or mkdir: {command}")
        done = subprocess.run([COLLSIM, *words[1:]], cwd=WORK, capture_output=True, text=True, timeout=timeout)
        # a stalled run exits 1 on purpose (lab 4 shows one); anything else must succeed
        if done.returncode not in (0, 1) or (done.returncode == 1 and "stalled" not in done.stderr):
            raise AssertionError(f"{name}: `{command}` failed ({done.returncode}): {done.stderr}")
        outputs[command] = done.stdout
    return outputs


def figures_in_page(name):
    """The page's text with every run of white space made one space, for checking that a
    figure the test computed is the one the page quotes (line breaks do not matter)."""
    return " ".join(page_text(name).split())


OUT = WORK / "out" / "labs"


def rows_of(name):
    """The rows of a results table the commands wrote to out/labs/."""
    import csv
    with open(OUT / name) as f:
        return list(csv.DictReader(f))


def fmt_time(seconds):
    """Six significant digits, as the pages write them."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.6g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.6g} ms"
    return f"{seconds:.6g} s"


# A figure in a page: a number with its unit after a space ("138.058 ms", "9.291 GB/s",
# "4.84 times", "1.25 n/B"), a percentage ("53.1%") or a factor ("4.8x"). Plain counts (16
# ranks, step 3) and the sizes in commands ("--size 1GiB") are not figures.
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?: (?:us|ms|ns|s|GB/s|MB/s|kB/s|Gbit/s|GiB|MiB|KiB|GB|MB|kB|B|"
                    r"times|samples/s|n/B)|%|x)(?![\w/])")


def figures_of(text):
    return FIGURE.findall(text)


# A lab's grading sheet (docs/labs/grading/LAB.json) as a student meets it.

def student_sheet(lab, student):
    """`collsim check LAB --student NAME`: its text and the student's parameters as printed."""
    sheet = subprocess.run([COLLSIM, "check", lab, "--student", student], capture_output=True, text=True,
                           check=True).stdout
    values = dict(part.split(" = ") for part in sheet.splitlines()[1].split(": ", 1)[1].split(", "))
    return sheet, values


def run_sheet_command(sheet, run):
    """Runs the command the sheet prints for `run`, from the repository root; returns its stdout."""
    command = next(shlex.split(line.rpartition("#")[0]) for line in sheet.splitlines() if line.rstrip().endswith(f"# {run}"))
    return subprocess.run([COLLSIM, *command[1:]], capture_output=True, text=True, check=True, cwd=REPO).stdout


def grade_answers(lab, student, answers):
    """`collsim check LAB FILE` on an answers file holding `answers`."""
    import json
    path = WORK / f"{lab}-{student}.json"
    path.write_text(json.dumps({"lab": lab, "student": student, "answers": answers}))
    return subprocess.run([COLLSIM, "check", lab, str(path)], capture_output=True, text=True)


SI = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3, "MB": 1e6, "GB": 1e9, "GBps": 1e9,
      "us": 1e-6, "ms": 1e-3, "s": 1}


def si(text):
    """A sheet's parameter as it prints it ("64MiB", "12.5GBps", "2us", "0.05") in SI units."""
    number, unit = re.fullmatch(r"([0-9.e+-]+?)([A-Za-z]*)", text).groups()
    return float(number) * SI[unit] if unit else float(number)


def summary(output, label):
    """A figure of a run's printed summary in SI units ("simulated time  3.20573 ms", "busbw  49.41 GB/s")."""
    number, unit = re.search(rf"^ *{label} +([0-9.]+) (us|ms|s|GB/s|MB/s)\b", output, re.M).groups()
    return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1, "GB/s": 1e9, "MB/s": 1e6}[unit]


class GradedLab:
    """The grading checks every lab test with a sheet makes (mixed into LabTest)."""

    def assertGradedRight(self, lab, student, answers):
        """Every question of the sheet, `answers` holding one answer per question asked."""
        done = grade_answers(lab, student, answers)
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)
        graded = re.findall(r"^  (\w+) +(predict|measure|check) +(right|WRONG|missing)", done.stdout, re.M)
        self.assertEqual([], [g for g in graded if g[2] != "right"], done.stdout)
        self.assertIn(f"{len(graded)} of {len(graded)} right", done.stdout)
        return done.stdout

    def assertGradedWrong(self, lab, student, answers, question, factor):
        """The same answers with `question`'s off by `factor`: that one, and only that one, is WRONG,
        with how far off it is and the tolerance it missed."""
        import json
        wrong = dict(answers, **{question: answers[question] * factor})
        done = grade_answers(lab, student, wrong)
        self.assertEqual(1, done.returncode, done.stdout + done.stderr)
        graded = dict(re.findall(r"^  (\w+) +(?:predict|measure|check) +(\w+)", done.stdout, re.M))
        self.assertEqual([question], [q for q, status in graded.items() if status != "right"], done.stdout)
        tolerance = next(q["tolerance"] for q in json.loads((REPO / "docs" / "labs" / "grading" / f"{lab}.json")
                                                              .read_text())["questions"] if q["id"] == question)
        off = re.search(rf"\n  {question} +\w+ +WRONG +\S+ ?\S*: ([0-9.]+)% off, tolerance {re.escape(tolerance)}\n",
                        done.stdout)
        self.assertIsNotNone(off, done.stdout)
        # how far off, as the answer was made wrong (within what a read-off answer's digits add)
        self.assertAlmostEqual(100 * abs(factor - 1), float(off.group(1)), delta=0.2)
        self.assertIn(f"{len(graded) - 1} of {len(graded)} right", done.stdout)


class LabTest(unittest.TestCase, GradedLab):
    """Assertions every lab test uses; subclasses set self.page and self.answers (texts
    flattened by figures_in_page). Every string a test finds in the page or the answers is
    recorded (`checked`), so that assertEveryFigureChecked can list the figures no test
    looked at."""

    checked = None
    maxDiff = None

    def record(self, text):
        if type(self).checked is None:
            type(self).checked = []
        type(self).checked.append(text)

    def assertIn(self, member, container, msg=None):
        if isinstance(member, str) and any(container is getattr(self, name, None) for name in ("page", "answers")):
            self.record(member)
        super().assertIn(member, container, msg)

    def assertEveryFigureChecked(self, where, given):
        """Every figure of the page (or answers) is inside a string some test checked, or is
        one of the `given` inputs (the platform's bandwidths and latencies, sizes, ...)."""
        text = getattr(self, where)
        checked = " \u2016 ".join(type(self).checked or [])
        missing = sorted({f for f in figures_of(text) if f not in checked and f not in given})
        self.assertEqual([], missing, f"{where}: figures no test checks (check them, or list them as given)")

    def assertClose(self, expected, actual, rel=1e-6):
        self.assertLessEqual(abs(actual - expected), rel * abs(expected), f"{actual} != {expected}")

    def assertRounds(self, quoted, value, where=()):
        """`quoted` ("138.058 ms", "0.405", "53.1%", "9.291 GB/s") is `value` (seconds, a ratio,
        bytes/s) rounded to the digits quoted: the tolerance is half a unit of the last digit
        the page writes, no more. With `where`, the page or answers must also quote it."""
        number, _, unit = quoted.partition(" ")
        if number.endswith("%"):
            number, unit = number[:-1], "%"
        scale = {"": 1, "us": 1e-6, "ms": 1e-3, "s": 1, "%": 1e-2, "GB/s": 1e9, "MB/s": 1e6, "kB/s": 1e3,
                 "ns": 1e-9, "x": 1, "samples/s": 1}[unit]
        decimals = len(number.partition(".")[2])
        self.assertEqual(f"{float(number):.{decimals}f}", f"{value / scale:.{decimals}f}",
                         f"{quoted} is not {value} rounded to the digits it quotes")
        for name in (where,) if isinstance(where, str) else where:
            self.assertIn(quoted, getattr(self, name), f"{name} should quote {quoted!r}")

    def assertQuoted(self, figure, where=("page", "answers")):
        for name in (where,) if isinstance(where, str) else where:
            self.assertIn(figure, getattr(self, name), f"{name} should quote {figure!r}")

    def assertPicturesCurrent(self, page, count):
        """Every picture the page shows (pictures/NAME.svg) is committed and byte-equal to
        the one its commands wrote to out/labs/."""
        import re
        pictures = re.findall(r"\]\(pictures/([^)]+\.svg)\)", page_text(page))
        self.assertEqual(count, len(pictures), f"{page} shows {pictures}")
        for name in pictures:
            with self.subTest(picture=name):
                committed = REPO / "docs" / "labs" / "pictures" / name
                self.assertTrue(committed.is_file(), f"{committed} is missing")
                self.assertEqual(committed.read_bytes(), (OUT / name).read_bytes(),
                                 f"docs/labs/pictures/{name} is stale: copy out/labs/{name} over it")


def section_text(name, heading):
    """A section of a page (from `## HEADING` to the next `## ` heading), flattened as
    figures_in_page flattens a page: the observations the answers pages hold for their lab."""
    text = page_text(name)
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 3)
    return " ".join(text[start:end if end > 0 else len(text)].split())
