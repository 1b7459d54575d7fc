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


class LabTest(unittest.TestCase):
    """Assertions every lab test uses; subclasses set self.page and self.answers (texts
    flattened by figures_in_page)."""

    def assertClose(self, expected, actual, rel=1e-6):
        self.assertLessEqual(abs(actual - expected), rel * abs(expected), f"{actual} != {expected}")

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
