"""What the Python scripts of tools/ share: bad input gets one line, `PROG: error: what is
wrong`, and exit status 2, never a traceback or argparse's usage block (the contract of
collsim itself, README "Limits"; tests/cli/test_hostile.py, class Tools).

A script imports it from its own folder:
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import tool_cli
"""
import argparse
import math
import os
import re
import sys
from pathlib import Path


def fail(prog, message, status=2):
    """One error line on stderr, then exit (2: bad input)."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    sys.exit(status)


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line: `PROG: error: argument --x: invalid ... value`."""

    def error(self, message):
        fail(self.prog, message)


def whole_number(lowest, what):
    """An argparse type: a decimal integer >= lowest, naming what it counts when refused."""
    def parse(text):
        if not re.fullmatch(r"-?[0-9]+", text):  # decimal digits only: no 0x, no 1e3
            raise argparse.ArgumentTypeError(f"'{text}' is not allowed; {what}, an integer >= {lowest}")
        if int(text) < lowest:
            raise argparse.ArgumentTypeError(f"{int(text)} is not allowed; {what}, an integer >= {lowest}")
        return int(text)
    return parse


def whole_numbers(lowest, what):
    """An argparse type: comma-separated decimal integers, each >= lowest."""
    parse = whole_number(lowest, what)
    return lambda text: [parse(part) for part in text.split(",")]


def positive_seconds(text):
    """An argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; a number of seconds, finite and > 0")
    return value


def folder(text):
    """An argparse type: a folder that exists."""
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder")
    return text


def folder_with(child):
    """An argparse type: a folder that holds `child` (a repository's src/, docs/)."""
    def parse(text):
        if not (Path(folder(text)) / child).is_dir():
            raise argparse.ArgumentTypeError(f"'{text}' has no {child}/ folder: not a collsim repository")
        return text
    return parse


def need_binary(prog, path, name="collsim", flag="--collsim"):
    """Exit 2 in one line unless `path` is an executable file."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        fail(prog, f"{path} is not a {name} binary (build it: tools/build, or give {flag})")


def run(prog, main):
    """Runs main() and exits with its status; a file the system refuses (OSError) is one line and
    exit 2, Ctrl-C exit 130, both without a traceback."""
    try:
        status = main()
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        fail(prog, f"{where}{error.strerror or error}")
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(status)
