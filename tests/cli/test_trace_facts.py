"""The trace's messages say which elements they carried (collsim-trace/2 `elements`).

Checked two ways, both independent of collsim's own step-through: the ring's elements
against Patarasuk & Yuan's chunk schedule written out here, and, for every algorithm of
every collective at awkward p, a replay written here (a receiver merges what the sender
held of those elements when the transfer started) that must end in the collective's result.
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import split_evenly

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))


def algorithms():
    listed = subprocess.run([COLLSIM, "list", "algorithms"], capture_output=True, text=True, check=True).stdout
    return [tuple(line.split()[:2]) for line in listed.splitlines() if line.strip()]


def gpu_topology(algorithm, p):
    """NCCL's algorithms run on GPUs: nodes of 4 (the last one smaller when 4 does not divide
    p); NVLS in one node, NVLSTree across nodes of equal size (NCCL's rules), CollNet across nodes
    of equal size whose switches reduce (SHARP)."""
    if algorithm == "nccl-nvls":
        return f"rail:1:{p}"
    equal_nodes = f"rail:2:{p // 2}" if p % 2 == 0 else f"rail:{p}:1"
    if algorithm == "nccl-nvls-tree":
        return equal_nodes
    if algorithm.startswith("nccl-collnet"):
        return equal_nodes + ":h100:ndr-sharp"
    return f"rail:{(p + 3) // 4}:4"


# Their reductions happen in the NVSwitch or the rails' switches, endpoints after the ranks
# (workers + s) that reduce what they receive: the replay below follows the ranks' holdings only.
IN_SWITCH = ("nccl-nvls", "nccl-nvls-tree", "nccl-collnet-direct", "nccl-collnet-chain")


def uses(kind, algorithm):
    """The scenario fields `collsim list algorithms` says the algorithm reads."""
    listed = subprocess.run([COLLSIM, "list", "algorithms"], capture_output=True, text=True, check=True).stdout
    for line in listed.splitlines():
        if line.split()[:2] == [kind, algorithm]:
            return set(line.split("[uses ")[1].rstrip("]").split(", ")) if "[uses " in line else set()
    raise KeyError(algorithm)


class TraceFacts(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())

    def trace(self, kind, algorithm, p, elements, *extra):
        path = self.tmp / "t.json"
        topology = gpu_topology(algorithm, p) if algorithm.startswith("nccl") else f"star:{p}"
        done = subprocess.run([COLLSIM, "run", "--collective", kind, "--algorithm", algorithm, "--workers", str(p),
                               "--topology", topology, "--size", str(4 * elements), "--messages", "all", "-q",
                               "--trace", str(path), *extra], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(path.read_text())

    def test_the_format_is_2(self):
        self.assertEqual(self.trace("allreduce", "ring", 2, 8)["format"], "collsim-trace/2")

    def test_ring_messages_carry_the_chunks_of_the_ring_schedule(self):
        for p, n in [(3, 10), (4, 16), (5, 7)]:
            with self.subTest(p=p, n=n):
                chunks = split_evenly(n, p)
                for m in self.trace("allreduce", "ring", p, n)["messages"]:
                    shift = 0 if m["phase"] == "reduce-scatter" else 1
                    first, count = chunks[(m["src"] - m["step"] + shift) % p]
                    self.assertEqual(m["elements"], [first, count], m)

    def replay_reaches_the_result(self, trace):
        kind, p = trace["scenario"]["collective"]["kind"], trace["scenario"]["workers"]
        root = trace["scenario"]["collective"]["root"]
        n = trace["payload"]["carried_elements"]
        messages = [m for m in trace["messages"] if m["round"] == 0 and m["epoch"] == 0]
        full = (1 << p) - 1
        # holds[r][e]: the ranks whose contribution element e of rank r contains
        if kind == "broadcast":
            holds = [[full if r == root else 0] * n for r in range(p)]
        elif kind == "allgather":
            holds = [[0] * n for _ in range(p)]
            for r, (first, count) in enumerate(split_evenly(n, p)):
                holds[r][first:first + count] = [full] * count
        else:
            holds = [[1 << r] * n for r in range(p)]
        # at one instant, what arrives before what leaves; a message that takes no time (a tree's
        # head: its data priced 0 bytes) arrives once it has left
        events = sorted([(m["end"], 0 if m["end"] > m["start"] else 2, False, i) for i, m in enumerate(messages)] +
                        [(m["start"], 1, True, i) for i, m in enumerate(messages)])
        carried = {}
        for _, _, starts, i in events:
            m = messages[i]
            self.assertIsNotNone(m["elements"], m)
            first, count = m["elements"]
            if starts:
                carried[i] = holds[m["src"]][first:first + count]
            else:
                holds[m["dst"]][first:first + count] = [a | b for a, b in
                                                        zip(holds[m["dst"]][first:first + count], carried[i])]
        if kind == "reduce":
            return all(h == full for h in holds[root])
        if kind == "reduce-scatter":
            return all(all(h == full for h in holds[r][first:first + count])
                       for r, (first, count) in enumerate(split_evenly(n, p)))
        return all(h == full for rank in holds for h in rank)

    def test_every_algorithm_replays_to_its_result_from_the_elements_alone(self):
        for kind, algorithm in algorithms():
            if kind == "alltoall" or algorithm in IN_SWITCH:
                continue  # blocks change place: elements name the sender's block only; IN_SWITCH
            for p in [3, 4, 5, 8]:
                read = uses(kind, algorithm)
                extra = ["--set", "collective.group_size=2"] if "groups" in read else []
                if "segment" in read:
                    extra += ["--set", "collective.segment=12"]  # pipelines of several segments
                with self.subTest(kind=kind, algorithm=algorithm, p=p):
                    self.assertTrue(self.replay_reaches_the_result(self.trace(kind, algorithm, p, 23, *extra)))

    def test_the_registry_says_which_fields_change_an_algorithms_messages(self):
        """A field an algorithm reads changes who sends what to whom; one it does not read is
        refused (exit 2, one line naming what reads it) rather than changing nothing."""
        variations = {"root": ("collective.root=0", "collective.root=3"),
                      "segment": ("collective.segment=64", "collective.segment=256"),
                      "servers": ("collective.servers=1", "collective.servers=2"),
                      "groups": ("collective.group_size=2", "collective.group_size=3"),
                      "channels": ("collective.channels=1", "collective.channels=2"),
                      "nccl": ("nccl.channels=1", "nccl.channels=2")}

        def messages(kind, algorithm, setting):
            trace = self.trace(kind, algorithm, 6, 120, "--set", setting)
            return sorted((m["src"], m["dst"], m["bytes"], m["phase"]) for m in trace["messages"])

        def refused(kind, algorithm, setting):
            done = subprocess.run([COLLSIM, "validate", "--collective", kind, "--algorithm", algorithm, "--workers", "6",
                                   "--topology", "star:6", "--size", "480", "--set", setting],
                                  capture_output=True, text=True, timeout=60)
            said = "does not read it (read by: " in done.stderr or "only NCCL's algorithms read it" in done.stderr
            return done.returncode == 2 and said and done.stdout == "" and len(done.stderr.splitlines()) == 1

        for kind, algorithm in algorithms():
            read = uses(kind, algorithm)
            for field, (one, other) in variations.items():
                if algorithm in IN_SWITCH:
                    continue  # NVLS: no message of the ranks; NVLSTree: 480 bytes are one NVLS chunk
                if algorithm == "nccl-alltoall" and field == "nccl":
                    continue  # nccl.channels cuts blocks of 64 KiB and more only: test_nccl.Alltoall
                with self.subTest(kind=kind, algorithm=algorithm, field=field):
                    if field in read:
                        self.assertNotEqual(messages(kind, algorithm, one), messages(kind, algorithm, other))
                    else:
                        self.assertTrue(refused(kind, algorithm, other))

    def test_the_fields_apply_in_every_mode(self):
        """Each field an algorithm reads changes its messages in gradient buckets, under ZeRO-2
        and ZeRO-3 (whose halves are the ring reduce-scatter and allgather) and after a
        rebuild, as in a single collective (issue 47: ZeRO-3 ignored collective.channels)."""
        layers = ["--set", "training.layers.uniform.count=3", "--set", "training.layers.uniform.parameters=360",
                  "--set", "training.bucket=480B"]
        modes = {"buckets": layers, "zero2": [*layers, "--set", "training.sharding=zero2"],
                 "zero3": [*layers, "--set", "training.sharding=zero3"],
                 "rebuild": ["--rounds", "2", "--set", 'faults=[{"kind": "preempt", "rank": 5, "at_round": 1}]',
                             "--set", "recovery.policy=rebuild"]}
        cases = [("binary-tree", "segment", "collective.segment=64", "collective.segment=256"),
                 ("hierarchical", "groups", "collective.group_size=2", "collective.group_size=3"),
                 ("ring", "channels", "collective.channels=1", "collective.channels=2"),
                 ("parameter-server", "servers", "collective.servers=1", "collective.servers=2"),
                 ("naive", "root", "collective.root=0", "collective.root=3")]

        def messages(algorithm, mode, setting):
            trace = self.trace("allreduce", algorithm, 6, 360, *modes[mode], "--set", setting)
            return sorted((m["src"], m["dst"], m["bytes"], m["phase"], m["round"]) for m in trace["messages"])

        for algorithm, field, one, other in cases:
            self.assertIn(field, uses("allreduce", algorithm))
            for mode in modes:
                if mode.startswith("zero") and algorithm != "ring":
                    continue  # sharding runs the ring's (or Rabenseifner's) halves only
                with self.subTest(algorithm=algorithm, field=field, mode=mode):
                    self.assertNotEqual(messages(algorithm, mode, one), messages(algorithm, mode, other))


if __name__ == "__main__":
    unittest.main()
