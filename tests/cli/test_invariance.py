"""No figure depends on a knob that should only change memory or speed: the carried
elements (`collective.carried_elements`), the messages kept for the trace (`--messages`,
`--detail`) and the engine options collsim documents as exact (actor stacks, guard pages,
the context factory, one thread). Each knob runs against its default on
the same scenario and every time, count and byte of the two traces must be equal to the
last digit: the summary (but the verification's own figures: the carried data differ),
every round, fault and recovery event, every link's and rank's totals, and every message
both traces list.

The scenarios: every algorithm of `collsim list algorithms` (so a new one is covered
without a new test), channels, gradient buckets without sharding and with ZeRO-2 and
ZeRO-3, several streams, compute noise, parameter servers of their own (shared with
local aggregation, dedicated, asynchronous, bounded staleness, and bounded with buckets,
streams and local aggregation), parallel runs (communicators
at once, a transformer's step) and faults under `rebuild`. `Sample` pairs each scenario with one knob (a carry
knob every other scenario; about 8 s); `Matrix` (CTest `invariance_matrix`, label heavy) runs every knob on every
scenario:

    cd tests/cli && COLLSIM=../../build/collsim python3 -m unittest -v test_invariance.Sample
    INVARIANCE_MATRIX=full python3 -m unittest -v test_invariance.Matrix
"""
import itertools
import json
import os
import subprocess
import unittest

from cli_common import COLLSIM, traced_run

# Each knob's arguments, added to a scenario's; its default is the scenario alone.
KNOBS = {
    "carried 31": ["--set", "collective.carried_elements=31"],
    "carried 1000": ["--set", "collective.carried_elements=1000"],
    "carried 1": ["--set", "collective.carried_elements=1"],
    "messages 5": ["--messages", "5"],
    "messages none": ["--messages", "none"],
    "detail full": ["--detail", "full"],
    "thread factory": ["--cfg", "contexts/factory:thread"],
    "one thread": ["--cfg", "contexts/nthreads:1"],
    "big stacks": ["--cfg", "contexts/stack-size:256", "--cfg", "contexts/guard-size:4096"],
}
# Not here: network/optim:Lazy (SimGrid's own default) is not exact with latencies (its
# selective update; docs/performance.md), and even where it is, it sums shares in another
# order than collsim's Full update, so times differ in their last digits.

# 16 ranks of 1.5 Mi float32 elements: more than the carry budget (256 Ki elements a
# rank), so the default carry is downscaled too, and the platform has contention.
PLATFORM = ["--topology", "nodes:4:4", "--size", "6MiB"]
LAYERS = ["--set", "training.layers.uniform.count=6", "--set", "training.layers.uniform.parameters=1572864",
          "--set", "training.layers.uniform.forward=1ms", "--set", "training.layers.uniform.backward=2ms",
          "--set", "training.bucket=1MiB"]
# Layers of very different sizes, some smaller than a chunk: each its own piece of the carry.
UNEVEN_LAYERS = ["--set", "training.layers=" + str([
    {"name": f"l{i}", "parameters": n, "forward": "100us", "backward": "200us"}
    for i, n in enumerate([600000, 64, 3, 250000, 1000, 400000, 7])]).replace("'", '"'),
    "--set", "training.bucket=1MiB"]
SLOW_LINK = ["--set", 'faults=[{"kind": "slow-link", "rank": 5, "at": "50us", "factor": 0.25}]',
             "--set", "recovery.policy=rebuild"]
PREEMPT = ["--set", 'faults=[{"kind": "preempt", "rank": 6, "at_round": 1}]', "--set", "recovery.policy=rebuild",
           "--rounds", "3", "--set", "training.compute=1ms"]


def algorithms():
    """(collective, algorithm, uses) of every line of `collsim list algorithms`."""
    out = subprocess.run([COLLSIM, "list", "algorithms"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        collective, algorithm = line.split()[:2]
        uses = line[line.rfind("[uses ") + 6:-1].split(", ") if "[uses " in line else []
        found.append((collective, algorithm, uses))
    return found


def scenarios():
    """name -> arguments of `collsim run`."""
    out = {}
    for collective, algorithm, uses in algorithms():
        # NCCL's algorithms run on GPUs: 4 nodes of 4, one NIC per GPU
        platform = ["--topology", "rail:4:4", "--size", "6MiB"] if "nccl" in uses else PLATFORM
        if algorithm == "nccl-nvls":  # NVLS alone runs inside one node's NVSwitch
            platform = ["--topology", "dgx-h100:1", "--size", "6MiB"]
        if algorithm.startswith("nccl-collnet"):  # CollNet where the rails' switches reduce (SHARP)
            platform = ["--topology", "rail:4:4:h100:ndr-sharp", "--size", "6MiB"]
        base = ["--collective", collective, "--algorithm", algorithm, *platform]
        out[f"{collective} {algorithm}"] = base
        if "channels" in uses:
            out[f"{collective} {algorithm} 4 channels"] = [*base, "--channels", "4"]
        if "segment" in uses:
            out[f"{collective} {algorithm} 64 KiB segments"] = [*base, "--set", "collective.segment=64KiB"]
    ring = ["--algorithm", "ring", "--topology", "nodes:4:4"]
    out["ring buckets"] = [*ring, *LAYERS]
    out["ring buckets 2 channels"] = [*ring, *LAYERS, "--channels", "2"]
    out["ring uneven layers"] = [*ring, *UNEVEN_LAYERS]
    out["rabenseifner uneven layers zero2"] = ["--algorithm", "rabenseifner", "--topology", "nodes:4:4",
                                               *UNEVEN_LAYERS, "--set", "training.sharding=zero2"]
    out["ring uneven layers zero3"] = [*ring, *UNEVEN_LAYERS, "--set", "training.sharding=zero3"]
    out["hierarchical buckets"] = ["--algorithm", "hierarchical", "--topology", "nodes:4:4", *LAYERS]
    out["ring zero2"] = [*ring, *LAYERS, "--set", "training.sharding=zero2"]
    out["rabenseifner zero3"] = ["--algorithm", "rabenseifner", "--topology", "nodes:4:4", *LAYERS,
                                 "--set", "training.sharding=zero3"]
    out["ring buckets 3 streams"] = [*ring, *LAYERS, "--set", "training.streams=3"]
    out["ring buckets lognormal noise"] = [*ring, *LAYERS, "--rounds", "2",
                                           "--set", 'training.noise={"distribution": "lognormal", "sigma": 0.1}']
    servers = ["--algorithm", "parameter-server", "--workers", "16", "--size", "6MiB"]
    out["parameter-server shared local aggregation"] = [
        *servers, "--topology", "nodes:4:4",
        "--set", 'collective.parameter_server={"placement": "shared", "per_node": 1, "local_aggregation": true}']
    out["parameter-server dedicated"] = [*servers, "--topology", "nodes:4:5",
                                         "--set", 'collective.parameter_server={"placement": "dedicated", "ratio": 0.25}']
    out["parameter-server asynchronous"] = [
        *servers, "--topology", "nodes:4:5", "--rounds", "3", "--set", "training.compute=1ms",
        "--set", 'collective.parameter_server={"placement": "dedicated", "ratio": 0.25, "mode": "asynchronous"}']
    out["parameter-server bounded staleness 1"] = [
        *servers, "--topology", "nodes:4:5", "--rounds", "3", "--set", "training.compute=1ms",
        "--set", 'collective.parameter_server={"placement": "dedicated", "ratio": 0.25, "mode": "bounded", '
                 '"staleness": 1}']
    out["parameter-server asynchronous buckets local aggregation 2 streams"] = [
        "--algorithm", "parameter-server", "--workers", "16", "--topology", "nodes:4:5", "--rounds", "3",
        "--set", 'training.layers={"uniform": {"count": 8, "parameters": 196608, "forward": "1ms", "backward": "2ms"}}',
        "--set", "training.bucket=200KiB", "--set", "training.streams=2",
        "--set", 'collective.parameter_server={"placement": "dedicated", "ratio": 0.25, "mode": "bounded", '
                 '"staleness": 1, "local_aggregation": true}']
    # Parallel runs (their trace has a `parallel` object instead of one collective's sections):
    # communicators at once sharing the network, and a transformer's training step.
    out["parallel communicators"] = ["--topology", "rail:2:4", "--set", "parallelism=" + json.dumps(
        {"tensor": 4, "data": 2, "collectives": [{"group": "tensor", "size": "6MiB", "algorithm": "ring"},
                                                 {"group": "data", "kind": "allgather", "size": "2MiB"}]})]
    out["parallel step tensor 2 pipeline 2 data 2"] = ["--topology", "nodes:2:4", "--set", "parallelism=" + json.dumps(
        {"tensor": 2, "pipeline": 2, "data": 2,
         "step": {"model": "tiny", "layers": 4, "global_batch": 8, "efficiency": 0.5}})]
    out["ring slow link rebuild"] = ["--algorithm", "ring", *PLATFORM, "--rounds", "2", *SLOW_LINK]
    out["hierarchical preempt rebuild"] = ["--algorithm", "hierarchical", *PLATFORM, *PREEMPT]
    out["binary-tree preempt rebuild"] = ["--algorithm", "binary-tree", *PLATFORM, *PREEMPT]
    return out


# Figures about the carried data itself, which a carry knob may change.
VERIFICATION = {"max_error", "bitwise_identical", "wrong_elements"}
# A parallel run's: the carried data's error, wherever a group or the run reports it.
PARALLEL_VERIFICATION = {"max_error"}


STEP = ("round", "epoch", "bucket", "phase", "step")


def per_step(messages):
    """A full list of messages summed per step, as a trace that keeps fewer lists them."""
    steps = {}
    for m in messages:
        key = tuple(m.get(k) for k in STEP)
        step = steps.setdefault(key, {"count": 0, "bytes": 0, "start": m["start"], "end": m["end"]})
        step["count"] += 1
        step["bytes"] += m["bytes"]
        step["start"] = min(step["start"], m["start"])
        step["end"] = max(step["end"], m["end"])
    return steps


def parallel_figures(parallel):
    """A parallel run's `parallel` object without the verification's own figures."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in PARALLEL_VERIFICATION}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(parallel)


def figures(trace):
    """Everything of a trace that no memory or speed knob may change."""
    if "parallel" in trace:
        return {"parallel": parallel_figures(trace["parallel"]), "links": trace["platform"]["links"], "messages": []}
    summary = {k: v for k, v in trace["summary"].items() if k not in VERIFICATION}
    if trace["messages_detail"] == "full":
        steps = per_step(trace["messages"])
        sample = trace["messages"]
    else:
        steps = {tuple(s.get(k) for k in STEP): {k: s[k] for k in ("count", "bytes", "start", "end")}
                 for s in trace["messages"]}
        sample = trace.get("message_sample", {}).get("messages", [])
    sample = [{k: m[k] for k in ("src", "dst", "bytes", "start", "end", "step", "phase")} for m in sample]
    return {"summary": summary, "rounds": trace["rounds"], "faults": trace["faults"],
            "recovery": trace["recovery"], "links": trace["links"]["list"], "ranks": trace["ranks"],
            "steps": steps, "messages": sample}


def first_difference(want, got, where=""):
    """Where two JSON-like values first differ, and how."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got), key=str):
            if want.get(key) != got.get(key):
                return first_difference(want.get(key), got.get(key), f"{where}.{key}")
    if isinstance(want, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(want, got)):
            if a != b:
                return first_difference(a, b, f"{where}[{i}]")
        if len(want) != len(got):
            return f"{where}: {len(want)} entries, then {len(got)}"
    return f"{where}: {want!r} by default, {got!r} with the knob"


def with_knob(arguments, knob):
    """A scenario's arguments with a knob, or None where the knob does not exist. A parallel
    run takes no `collective` keys: its plain collectives carry `carried_elements` each, and a
    training step chooses its own carry (the fewest elements that leave no chunk empty)."""
    block = next((a for a in arguments if a.startswith("parallelism=")), None)
    if block is None or not knob.startswith("carried"):
        return [*arguments, *KNOBS[knob]]
    parallelism = json.loads(block[len("parallelism="):])
    if "collectives" not in parallelism:
        return None
    for collective in parallelism["collectives"]:
        collective["carried_elements"] = int(knob.split()[1])
    return [a if a != block else "parallelism=" + json.dumps(parallelism) for a in arguments]


class Invariance(unittest.TestCase):
    defaults = {}

    def default_of(self, name, arguments):
        if name not in self.defaults:
            self.defaults[name] = figures(traced_run(*arguments))
        return self.defaults[name]

    def check(self, name, arguments, knob):
        with self.subTest(scenario=name, knob=knob):
            knobbed = with_knob(arguments, knob)
            if knobbed is None:
                self.skipTest(f"{name} has no {knob}")
            want = self.default_of(name, arguments)
            trace = traced_run(*knobbed)
            verification = trace["parallel"] if "parallel" in trace else trace["summary"]
            self.assertTrue(verification["verified"], verification.get("failure", verification))
            got = figures(trace)
            # --messages keeps fewer messages (the first ones): those both keep must agree
            shared = min(len(want["messages"]), len(got["messages"]))
            for part in want:
                expected, actual = want[part], got[part]
                if part == "messages":
                    expected, actual = expected[:shared], actual[:shared]
                # (assertEqual's diff of two long lists takes minutes: name the first difference)
                self.assertTrue(expected == actual, f"{name}, {knob}: {part}: {first_difference(expected, actual)}")


class Sample(Invariance):
    def test_each_scenario_against_one_knob(self):
        # every other scenario meets a carry knob, the others the rest in turn
        carries = itertools.cycle(k for k in KNOBS if k.startswith("carried"))
        others = itertools.cycle(k for k in KNOBS if not k.startswith("carried"))
        for i, (name, arguments) in enumerate(scenarios().items()):
            knob = next(carries) if i % 2 == 0 else None
            if knob is None or with_knob(arguments, knob) is None:
                knob = next(others)
            self.check(name, arguments, knob)


@unittest.skipUnless(os.environ.get("INVARIANCE_MATRIX") == "full", "the full matrix: INVARIANCE_MATRIX=full")
class Matrix(Invariance):
    def test_every_knob_on_every_scenario(self):
        for name, arguments in scenarios().items():
            for knob in KNOBS:
                self.check(name, arguments, knob)


if __name__ == "__main__":
    unittest.main()
