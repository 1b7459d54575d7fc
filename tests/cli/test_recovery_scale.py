"""Recovery at 64-256 ranks (docs/recovery.md): fault-free runs under "rebuild" drop nobody
and take exactly as long as under "none"; a matrix of algorithms x faults x sizes x culprit
positions drops exactly the rank the scenario strikes, keeps identical models and finishes
every round. The culprit comes from the scenario, never from the run.

The default suite runs a sample; the whole matrix runs with the CTest label `heavy`:
    ctest --test-dir build -L heavy            (or RECOVERY_MATRIX=full, from tests/cli)
"""
import itertools
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
FULL = os.environ.get("RECOVERY_MATRIX") == "full"


def run(document):
    with tempfile.TemporaryDirectory() as folder:
        path, trace = Path(folder) / "s.json", Path(folder) / "t.json"
        path.write_text(json.dumps(document))
        done = subprocess.run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace)], capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            raise AssertionError(f"exit {done.returncode}: {done.stderr}")
        return json.loads(trace.read_text())


def scenario(topology, p, algorithm, policy, faults=(), rounds=3, model=True, size="4MiB", compute="1ms"):
    training = {"rounds": rounds, "compute": compute}
    if model:
        training["model"] = "linear-regression"
    return {"topology": topology, "workers": p, "network": "ideal",
            "collective": {"algorithm": algorithm, "size": size, "carried_elements": 4096},
            "training": training, "faults": list(faults), "recovery": {"policy": policy}}


# Every generated topology family at p = 64.
FAMILIES = ["star:64", "torus:4x4x4", "dragonfly:4:4:4", "nodes:8:8", "fat-tree:2:8,8:1,8:1,8"]
# The ring of each step synchronises its ranks: no deadline ever passes in a healthy run,
# so the simulated time is the same to the last bit.
EXACT = ["ring", "rabenseifner", "recursive-doubling", "direct", "naive", "hierarchical", "parameter-server"]
# Pipelined trees: a leaf waits for the whole broadcast, past its deadline; the check (a
# timer) splits SimGrid's time steps and the last digit may move (docs/recovery.md).
TREES = ["binary-tree", "double-binary-tree", "naive-binomial"]


class FaultFree(unittest.TestCase):
    def test_rebuild_costs_nothing_and_drops_nobody_on_every_family(self):
        for topology in FAMILIES:
            for algorithm in EXACT + TREES:
                with self.subTest(topology=topology, algorithm=algorithm):
                    none = run(scenario(topology, 64, algorithm, "none", model=False))
                    rebuild = run(scenario(topology, 64, algorithm, "rebuild", model=False))
                    dropped = [r for e in rebuild["recovery"] for r in e["dropped_ranks"]]
                    self.assertEqual(dropped, [])
                    self.assertEqual(rebuild["summary"]["final_group"], list(range(64)))
                    end_none, end_rebuild = none["rounds"][-1]["end"], rebuild["rounds"][-1]["end"]
                    if algorithm in EXACT:
                        self.assertEqual(end_rebuild, end_none)
                    else:
                        self.assertAlmostEqual(end_rebuild / end_none, 1, delta=1e-12)


# Fault kinds, each with the rank it strikes: (fault document, whether the rank must go).
def faults_on(rank):
    return {
        "preempt": {"kind": "preempt", "rank": rank, "at_round": 1},
        "slow-link 0.01": {"kind": "slow-link", "rank": rank, "at_round": 1, "factor": 0.01},
        "slow-host 0.05": {"kind": "slow-host", "rank": rank, "at_round": 1, "factor": 0.05},
        "link-down": {"kind": "link-down", "rank": rank, "at_round": 1},
    }


def positions(p, algorithm):
    # first, last, middle, and the algorithm's special rank (root, server, a node leader)
    special = {"parameter-server": 0, "hierarchical": 8, "binary-tree": 0, "naive": 0}.get(algorithm, 1)
    return sorted({0, p - 1, p // 2 + 1, special})


MATRIX_ALGORITHMS = ["ring", "naive", "recursive-doubling", "rabenseifner", "hierarchical", "parameter-server",
                     "direct", "binary-tree"]
# Where every rank talks to one root or server, or to everyone at once, a slow NIC hides
# behind the shared links (the gather is as slow with it): keeping may pay, so the matrix
# asserts a drop only where the fault certainly stalls the group.
ROOTED = {"naive", "parameter-server", "direct"}


def applies(algorithm, kind):
    return not (algorithm in ROOTED and kind.startswith("slow-link"))


def cases():
    every = []
    for p, algorithm in itertools.product([8, 64, 256], MATRIX_ALGORITHMS):
        for rank in positions(p, algorithm):
            for kind in faults_on(rank):
                if applies(algorithm, kind):
                    every.append((p, algorithm, rank, kind))
    if FULL:
        return every
    # The sample: every algorithm and fault kind at p = 64, one position each, and p = 256 for the ring.
    sample = []
    for i, (algorithm, kind) in enumerate(itertools.product(MATRIX_ALGORITHMS, faults_on(0))):
        if not applies(algorithm, kind):
            continue
        ranks = positions(64, algorithm)
        sample.append((64, algorithm, ranks[i % len(ranks)], kind))
    sample += [(256, "ring", 100, "slow-link 0.01"), (256, "ring", 255, "preempt"), (8, "ring", 3, "slow-host 0.05")]
    return sample


class Matrix(unittest.TestCase):
    def test_the_struck_rank_and_only_it_is_dropped(self):
        for p, algorithm, rank, kind in cases():
            with self.subTest(p=p, algorithm=algorithm, rank=rank, fault=kind):
                topology = f"nodes:{p // 8}:8" if algorithm == "hierarchical" else f"star:{p}"
                # 20 ms of compute against a short allreduce: dropping a 20x straggler pays
                trace = run(scenario(topology, p, algorithm, "rebuild", [faults_on(rank)[kind]], rounds=4,
                                     size="256KiB", compute="20ms"))
                dropped = sorted(r for e in trace["recovery"] for r in e["dropped_ranks"])
                self.assertEqual(dropped, [rank])
                quality = trace["summary"]["recovery_quality"]
                self.assertEqual(quality["culprits"], [rank])
                self.assertEqual(quality["healthy_dropped"], [])
                self.assertEqual(trace["summary"]["rounds_completed"], 4)
                self.assertEqual(trace["summary"]["final_group"], [r for r in range(p) if r != rank])
                self.assertTrue(trace["summary"]["verified"])
                self.assertTrue(trace["summary"]["models_identical"])


def run_raw(document):
    """Runs a scenario that may fail: (exit status, stderr lines, trace or None)."""
    with tempfile.TemporaryDirectory() as folder:
        path, trace = Path(folder) / "s.json", Path(folder) / "t.json"
        path.write_text(json.dumps(document))
        done = subprocess.run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace)], capture_output=True,
                              text=True, timeout=600)
        return done.returncode, done.stderr.splitlines(), json.loads(trace.read_text()) if trace.exists() else None


class ElasticBound(unittest.TestCase):
    """recovery.min_workers: a rebuild that would go below it stops the run instead."""

    def bounded(self, p, algorithm, struck, min_workers, topology=None):
        document = scenario(topology or f"star:{p}", p, algorithm, "rebuild",
                            [{"kind": "preempt", "rank": struck, "at_round": 1}], rounds=4, size="256KiB",
                            compute="20ms")
        document["recovery"]["min_workers"] = min_workers
        return run_raw(document)

    def test_a_rebuild_below_the_bound_stops_with_one_line_and_who_was_left(self):
        for p, algorithm, struck in [(8, "ring", 3), (64, "recursive-doubling", 63), (64, "parameter-server", 5)]:
            with self.subTest(p=p, algorithm=algorithm, struck=struck):
                status, stderr, trace = self.bounded(p, algorithm, struck, min_workers=p)
                self.assertEqual(status, 1)
                reason = (f"recovery gave up: dropping rank {struck} would leave {p - 1} workers, "
                          f"below recovery.min_workers {p}.")
                self.assertEqual(stderr, [f"collsim: stalled: {reason}"])
                left = [r for r in range(p) if r != struck]
                summary = trace["summary"]
                self.assertEqual(summary["stalled"], reason)
                self.assertEqual(summary["final_group"], left)
                self.assertFalse(summary["verified"])
                self.assertEqual(summary["rounds_completed"], 1)  # the preemption strikes at round 1
                last = trace["recovery"][-1]
                self.assertTrue(last["stopped"])
                self.assertEqual(last["dropped_ranks"], [])
                self.assertEqual(last["group"], left)
                self.assertEqual(last["epoch_before"], last["epoch_after"])
                self.assertFalse(any(e["dropped_ranks"] for e in trace["recovery"]))

    def test_a_rebuild_down_to_the_bound_goes_on(self):
        status, stderr, trace = self.bounded(8, "ring", 3, min_workers=7)
        self.assertEqual((status, stderr), (0, []))
        self.assertEqual(trace["summary"]["final_group"], [0, 1, 2, 4, 5, 6, 7])
        self.assertEqual(trace["summary"]["rounds_completed"], 4)
        self.assertNotIn("stopped", trace["recovery"][-1])


if __name__ == "__main__":
    unittest.main()
