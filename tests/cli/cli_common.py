"""What the command-line test suites share: where the repository and the program are, and
a run whose trace the test reads."""
import json
import os
import resource
import signal
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# absolute: some suites run their commands from the repository root
COLLSIM = os.path.abspath(os.environ.get("COLLSIM", str(REPO / "build" / "collsim")))


def traced_run(*args, timeout=300):
    """`collsim run ARGS --quiet --trace T`, which must succeed within `timeout` s of CPU
    (bounded_run); returns the trace."""
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.json"
        bounded_run([COLLSIM, "run", "--quiet", "--trace", str(trace), *map(str, args)], timeout, check=True)
        return json.loads(trace.read_text())


def bounded_run(command, cpu_seconds, **kwargs):
    """subprocess.run(command, **kwargs) with its hang guard in CPU seconds, not wall time: a
    run that never ends spends CPU (SimGrid stops by itself when every actor is blocked), while
    a loaded machine (load 15 on 2 cores) stretches a sound run's wall time tenfold, and a wall
    timeout failed the recovery tests there. Past `cpu_seconds` of CPU the program gets
    SIGXCPU and the test fails saying so; the wall timeout, 20 times that, is a last resort."""
    def limit_cpu():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    check = kwargs.pop("check", False)
    done = subprocess.run(command, preexec_fn=limit_cpu, timeout=20 * cpu_seconds, **kwargs)
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise AssertionError(f"{' '.join(map(str, command))}: more than {cpu_seconds} s of CPU, stopped")
    if check:
        done.check_returncode()
    return done


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
