"""What the command-line test suites share: where the repository and the program are, and
a run whose trace the test reads."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# absolute: some suites run their commands from the repository root
COLLSIM = os.path.abspath(os.environ.get("COLLSIM", str(REPO / "build" / "collsim")))


def traced_run(*args, timeout=300):
    """`collsim run ARGS --quiet --trace T`, which must succeed; returns the trace."""
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.json"
        subprocess.run([COLLSIM, "run", "--quiet", "--trace", str(trace), *map(str, args)], check=True,
                       timeout=timeout)
        return json.loads(trace.read_text())


def split_evenly(count, parts):
    """chunks.hpp's split: the first count % parts chunks hold one element more."""
    base, extra = divmod(count, parts)
    chunks, offset = [], 0
    for i in range(parts):
        size = base + (1 if i < extra else 0)
        chunks.append((offset, size))
        offset += size
    return chunks


def route_lines(p, middle):
    """Hand-written platforms' <route> lines between every two of p hosts host-0 .. host-(p-1):
    up the source's host-a_link, the link_ctn elements middle(a, b) gives, down the
    destination's host-b_link."""
    lines = []
    for a in range(p):
        for b in range(p):
            if a == b:
                continue
            links = [f'<link_ctn id="host-{a}_link" direction="UP"/>', *middle(a, b),
                     f'<link_ctn id="host-{b}_link" direction="DOWN"/>']
            lines.append(f'    <route src="host-{a}" dst="host-{b}" symmetrical="NO">{"".join(links)}</route>')
    return lines
