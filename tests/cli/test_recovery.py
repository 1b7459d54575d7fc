"""Faults and recovery, checked against values worked out here from the links' alpha and B
and the scenario's timings (docs/recovery.md).

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_recovery -v   (from tests/cli)
"""
import itertools
import json
import os
import tempfile
import unittest
from pathlib import Path

from cli_common import bounded_run, traced_run

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
MiB = 1024 * 1024
ALPHA, B = 2e-6, 10e9     # star generator and star-8.xml: two 1us links, 10 GB/s


def run(scenario, *extra, expect=0):
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        done = bounded_run([COLLSIM, "run", str(REPO / scenario), "--quiet", "--trace", str(trace), *extra], 120,
                           cwd=REPO, capture_output=True, text=True)
        if done.returncode != expect:
            raise AssertionError(f"{scenario}: exit {done.returncode}, wanted {expect}: {done.stderr}")
        return json.loads(trace.read_text()), done.stderr


def ring_time(p, n, bandwidth):
    return 2 * (p - 1) * (ALPHA + n / p / bandwidth)


def whole_ring_time(p, n, bandwidth):
    """The ring of whole float32 elements: each step paced by the largest chunk, ceil(n/4/p) of them."""
    return 2 * (p - 1) * (ALPHA + -(-(n // 4) // p) * 4 / bandwidth)


class SlowLink(unittest.TestCase):
    def test_waiting_stretches_the_round_as_the_formula_says(self):
        trace, _ = run("scenarios/faults/slow-link-3-wait.json")
        rounds = trace["rounds"]
        self.assertEqual(len(rounds), 5)
        healthy, slowed = whole_ring_time(3, 64 * MiB, B), whole_ring_time(3, 64 * MiB, 0.01 * B)
        for r in rounds:
            want = healthy if r["round"] < 2 else slowed  # the fault strikes as round 2 starts
            self.assertAlmostEqual(r["collective"] / want, 1, delta=1e-7, msg=f"round {r['round']}")
            # a round's computation is counted from its first rank's start: the ring's chunks of
            # whole elements differ by one (4 bytes, 0.4 ns), so the ranks start up to that apart
            self.assertAlmostEqual(r["compute"], 0.020, delta=1e-9)

    def test_rebuild_drops_the_cut_off_worker_and_detects_one_timeout_after_the_stall(self):
        trace, _ = run("scenarios/faults/slow-link-3-rebuild.json")
        [event] = trace["recovery"]
        self.assertEqual(event["dropped_ranks"], [2])
        self.assertEqual(event["group"], [0, 1])
        # Each wait's deadline is 3x its own transfer: one ring step, alpha + n/(pB).
        step = ALPHA + 64 * MiB / 3 / B
        timeout = trace["summary"]["timeout"]
        self.assertAlmostEqual(timeout / (3 * step), 1, delta=1e-6)
        # The group stalls when round 2's collective begins, after its 20 ms of compute; the
        # first step's transfers with rank 2 pass their deadline 3 steps later.
        stalled = event["fault_time"] + 0.020
        self.assertAlmostEqual(event["detected"], stalled + 3 * step, delta=1e-6)
        self.assertEqual(event["rule"], "every late or broken transfer involves it")
        self.assertEqual(trace["summary"]["recovery_quality"]["healthy_dropped"], [])
        self.assertEqual(trace["summary"]["recovery_quality"]["culprits"], [2])
        self.assertLessEqual(event["detected"], event["rebuilt"])
        self.assertLessEqual(event["rebuilt"], event["resumed"])
        self.assertLess(event["resumed"], event["round_completed"])
        # After the rebuild two workers run the ring: 2(p-1)(alpha + n/(pB)) with p = 2 (the
        # carried elements were split for p = 3, so the two halves differ by one element: 1e-6).
        for r in trace["rounds"][3:]:
            self.assertEqual(r["group"], [0, 1])
            self.assertAlmostEqual(r["collective"] / ring_time(2, 64 * MiB, B), 1, delta=1e-6)

    def test_rebuilding_costs_less_than_waiting(self):
        rebuild, _ = run("scenarios/faults/slow-link-3-rebuild.json", "--baseline")
        wait, _ = run("scenarios/faults/slow-link-3-wait.json", "--baseline")
        self.assertEqual(rebuild["summary"]["baseline_time"], wait["summary"]["baseline_time"])
        # (detected within three ring steps, the rebuild can even beat the fault-free run:
        # two ranks move less data than three)
        self.assertLess(rebuild["summary"]["time_lost"], wait["summary"]["time_lost"] / 100)
        # the fault-free twin: five rounds of 20 ms compute and a healthy ring
        self.assertAlmostEqual(wait["summary"]["baseline_time"] / (5 * (0.020 + ring_time(3, 64 * MiB, B))), 1,
                               delta=1e-7)


class Preemption(unittest.TestCase):
    def test_waiting_group_stalls_with_a_clear_report_and_a_trace(self):
        trace, stderr = run("scenarios/faults/preempt-8-wait.json", expect=1)
        lines = [line for line in stderr.splitlines() if line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn("Rank 5 (host-5) was preempted at 25 ms", lines[0])
        self.assertIn("Rank 6 lost its transfer with rank 5", lines[0])
        self.assertNotIn("Deadlock", stderr)
        self.assertIn("stalled", trace["summary"])
        self.assertFalse(trace["summary"]["verified"])
        self.assertEqual(trace["faults"][0]["kind"], "preempt")

    def test_rebuild_drops_the_preempted_worker_and_keeps_the_models_identical(self):
        trace, _ = run("scenarios/faults/preempt-8-rebuild.json")
        [event] = trace["recovery"]
        self.assertEqual(event["dropped_ranks"], [5])
        self.assertEqual(event["dropped_hosts"], ["host-5"])
        self.assertEqual(event["fault_time"], 0.025)
        # the survivors' transfers with rank 5 fail at once: detection is immediate
        self.assertLess(event["detected"] - event["fault_time"], 1e-3)
        summary = trace["summary"]
        self.assertTrue(summary["verified"])
        self.assertEqual(summary["final_group"], [0, 1, 2, 3, 4, 6, 7])
        self.assertEqual(summary["rounds_completed"], 4)
        for r in trace["rounds"]:
            self.assertTrue(r["models_identical"])
            self.assertEqual(len(r["group"]), 8 if r["round"] < event["round"] else 7)
        losses = [r["loss"] for r in trace["rounds"]]
        self.assertEqual(losses, sorted(losses, reverse=True), "training makes progress")


    def test_a_returning_worker_rejoins_with_the_same_model(self):
        trace, _ = run("scenarios/faults/preempt-8-return.json")
        dropped, joined = trace["recovery"]
        self.assertEqual(dropped["dropped_ranks"], [5])
        self.assertEqual(joined["joined_ranks"], [5])
        self.assertEqual(joined["group"], list(range(8)))
        self.assertEqual([f["action"] for f in trace["faults"]], ["applied", "returned"])
        self.assertAlmostEqual(trace["faults"][1]["time"], 0.055, delta=1e-12)
        for r in trace["rounds"]:
            self.assertTrue(r["models_identical"], f"round {r['round']}")
            if r["round"] >= joined["round"]:
                self.assertEqual(r["group"], list(range(8)))
        self.assertEqual(trace["summary"]["final_group"], list(range(8)))
        self.assertTrue(trace["summary"]["verified"])

    def test_a_preempted_root_is_replaced_by_rank_0_of_the_rebuilt_group(self):
        # the root rank 4 of 5 is gone: the rebuilt group of 4 runs (and its model prices) root 0;
        # pricing root 4 in a group of 4 read past its ranks (SIGBUS, or a caught segfault)
        for kind, algorithm in ("allreduce", "naive"), ("broadcast", "flat"), ("reduce", "flat"):
            for at in "1ms", "1.000001ms":
                with self.subTest(kind=kind, at=at), tempfile.TemporaryDirectory() as folder:
                    path = Path(folder) / "s.json"
                    path.write_text(json.dumps({
                        "workers": 5, "topology": "star:5", "training": {"rounds": 3, "compute": "1ms"},
                        "collective": {"kind": kind, "algorithm": algorithm, "size": "20KiB", "root": 4},
                        "faults": [{"kind": "preempt", "rank": 4, "at": at}],
                        "recovery": {"policy": "rebuild", "timeout": "2x"}}))
                    trace, _ = run(path)
                    self.assertTrue(trace["summary"]["verified"])
                    self.assertEqual(trace["summary"]["final_group"], [0, 1, 2, 3])
                    self.assertEqual(trace["summary"]["rounds_completed"], 3)

    def test_return_after_needs_rebuild(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            document = json.loads((REPO / "scenarios/faults/preempt-8-return.json").read_text())
            document["recovery"]["policy"] = "none"
            path.write_text(json.dumps(document))
            done = bounded_run([COLLSIM, "run", str(path)], 60, capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("faults.0.return_after: a worker can only rejoin a group that is rebuilt", done.stderr)


class Straggler(unittest.TestCase):
    def test_waiting_pays_the_straggler_every_round(self):
        trace, _ = run("scenarios/faults/straggler-8-wait.json")
        healthy = ring_time(8, 16 * MiB, B)
        for r in trace["rounds"]:
            # from round 1 rank 3 computes 10 ms / 0.2 = 50 ms and everyone waits for it
            self.assertAlmostEqual((r["end"] - r["start"]) / ((0.010 if r["round"] == 0 else 0.050) + healthy), 1,
                                   delta=1e-7)

    def test_rebuild_drops_only_the_straggler(self):
        trace, _ = run("scenarios/faults/straggler-8-rebuild.json")
        [event] = trace["recovery"]
        self.assertEqual(event["dropped_ranks"], [3])
        self.assertIn("straggler", event["reason"])


class BadInput(unittest.TestCase):
    def bad(self, document, *patterns):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(document))
            done = bounded_run([COLLSIM, "run", str(path), "--trace", str(Path(folder) / "t.json")], 60, cwd=REPO,
                               capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            for pattern in patterns:
                self.assertRegex(done.stderr, pattern)
            self.assertFalse((Path(folder) / "t.json").exists())

    BASE = {"topology": "star:4", "workers": 4, "collective": {"size": "4KiB"}, "training": {"rounds": 3}}

    def with_faults(self, *faults, **extra):
        return {**self.BASE, "faults": list(faults), **extra}

    def test_fault_on_a_missing_host(self):
        self.bad(self.with_faults({"kind": "preempt", "host": "host-9", "at": "1ms"}),
                 r"faults\.0\.host: no host 'host-9'.*host-0")

    def test_fault_on_a_missing_link(self):
        self.bad(self.with_faults({"kind": "link-down", "link": "nolink", "at": "1ms"}), r"faults\.0\.link: no link 'nolink'")

    def test_at_round_beyond_the_rounds(self):
        self.bad(self.with_faults({"kind": "preempt", "rank": 1, "at_round": 3}),
                 r"faults\.0\.at_round: round 3 does not exist; the scenario has rounds 0 to 2")

    def test_preempting_every_worker(self):
        self.bad(self.with_faults(*[{"kind": "preempt", "rank": r, "at": "1ms"} for r in range(4)]),
                 r"every worker is preempted")

    def test_policy_typo(self):
        self.bad({**self.BASE, "recovery": {"policy": "rebiuld"}}, r"recovery\.policy: .*did you mean 'rebuild'")

    def test_unknown_fault_kind(self):
        self.bad(self.with_faults({"kind": "slow-links", "host": "host-1", "at": "1ms"}), r"did you mean 'slow-link'")

    def test_short_timeout_warns(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps({**self.BASE, "recovery": {"policy": "rebuild", "timeout": "1ns"}}))
            done = bounded_run([COLLSIM, "run", str(path), "--quiet"], 60, cwd=REPO, capture_output=True, text=True)
        self.assertRegex(done.stderr, r"warning: recovery\.timeout 1ns is shorter than one chunk's transfer")


class ReturnDuringLayeredTraining(unittest.TestCase):
    """A preempted worker that comes back while the group trains layer by layer (buckets
    reduced during backward): the run finishes every round with identical models, drops the
    preempted rank only and takes it back. Cases that broke: a binary tree where the
    returning worker waited on the verdict receive of the worker that was killed (SimGrid
    had cancelled it), a double binary tree where forward was judged against a zero compute
    time (a healthy rank dropped as a straggler, mid model share), a 16-rank tree where a
    wait reaching a transfer that had finished was judged late from its start."""

    LAYERS = {"uniform": {"count": 8, "parameters": 2097152, "forward": "1ms", "backward": "2ms"}}
    ROUNDS = 6

    def scenario(self, algorithm, p, rank, at, back, bucket):
        topology = f"nodes:{p // 4}:4" if algorithm == "hierarchical" else f"star:{p}"
        training = {"rounds": self.ROUNDS, "model": "linear-regression", "layers": self.LAYERS}
        if bucket:
            training["bucket"] = "2MiB"
        return {"workers": p, "topology": topology, "collective": {"algorithm": algorithm, "size": "8MiB"},
                "training": training, "recovery": {"policy": "rebuild"},
                "faults": [{"kind": "preempt", "rank": rank, "at": at, "return_after": back}]}

    def test_the_returning_rank_is_the_only_one_dropped_and_rejoins(self):
        cases = [("binary-tree", 8, 7, "5ms", "1ms", True), ("binary-tree", 16, 7, "5ms", "1ms", True),
                 ("binary-tree", 16, 0, "9ms", "0.1ms", True), ("double-binary-tree", 8, 7, "5ms", "0.1ms", False),
                 ("double-binary-tree", 8, 0, "5ms", "0.1ms", False), ("double-binary-tree", 16, 7, "3ms", "6ms", True),
                 ("ring", 16, 7, "5ms", "1ms", True), ("recursive-doubling", 8, 3, "3ms", "1ms", True),
                 ("hierarchical", 16, 15, "5ms", "1ms", True), ("parameter-server", 8, 7, "5ms", "1ms", True)]
        for algorithm, p, rank, at, back, bucket in cases:
            with self.subTest(algorithm=algorithm, p=p, rank=rank, at=at, back=back, bucket=bucket), \
                    tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "s.json"
                path.write_text(json.dumps(self.scenario(algorithm, p, rank, at, back, bucket)))
                trace = traced_run(path)
                summary = trace["summary"]
                self.assertTrue(summary["verified"])
                self.assertEqual(summary["rounds_completed"], self.ROUNDS)
                self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
                dropped = sorted({d for event in trace["recovery"] for d in event["dropped_ranks"]})
                self.assertEqual(dropped, [rank])
                self.assertEqual(summary["recovery_quality"]["healthy_dropped"], [])
                # Detected when the transfers with it broke, never before the preemption.
                [drop] = [event for event in trace["recovery"] if event["dropped_ranks"]]
                struck = float(at.removesuffix("ms")) / 1e3
                self.assertAlmostEqual(drop["fault_time"], struck, delta=1e-15)
                self.assertGreaterEqual(drop["detected"], struck)
                # Back by 9.1 ms; round r starts no earlier than r x (forward + backward) = 3r ms:
                # the next round to start when it is back is at most round 4 of 0-5. It rejoins.
                joined = [event["joined_ranks"] for event in trace["recovery"] if event["joined_ranks"]]
                self.assertEqual(joined, [[rank]])
                self.assertEqual(summary["final_group"], list(range(p)))


class FaultDuringModelShare(unittest.TestCase):
    """A second fault while a returning worker receives the model (or waits for it): the
    rebuild drops only the rank struck, does not take the joiner along (it has no state of
    the round the group resumes) and admits it again at a later round; every round is done,
    with identical models. It exited 1 ("abandoned by the coordinator's verdict") when the
    share ran outside the collective's retry.

    Timing (ring, 16 MiB, 3 ms of compute, star:p): host p-1 is preempted at 2 ms, in round
    0's compute, and is back at 2.5 ms; round 0's collective starts at 3 ms and breaks on
    it, so the rebuild that drops it (and admits it at round 1) comes soon after 3 ms (3.6
    ms). Round 1 cannot start before 3 ms + 2(p-1)(alpha + n/(pB)) (about 6 ms), and
    the share of the 16 MiB model takes log2(p) steps of alpha + n/B (1.68 ms each) after
    that: a fault between 5 ms and 6 ms + log2(p) x 1.68 ms finds the joiner admitted and
    waiting for the model, or receiving it. A link down matters only when a transfer
    crosses it: rank 3 receives its share in the last step, from 9.91 ms (the redone round
    0 ends at 6.55 ms), which the link down from 2.2 steps in (9.64 ms) for 1 ms covers."""

    P, ROUNDS, JOINER = 8, 6, 7

    def scenario(self, second, algorithm="ring", p=P, layered=False):
        training = {"rounds": self.ROUNDS, "model": "linear-regression"}
        collective = {"algorithm": algorithm}
        if layered:  # 16 MiB of float32 parameters in 8 layers, 3 ms a pass as above
            training.update({"bucket": "2MiB", "layers": {"uniform": {"count": 8, "parameters": 4194304,
                                                                      "forward": "1ms", "backward": "2ms"}}})
        else:
            training["compute"] = "3ms"
            collective["size"] = "16MiB"
        return {"workers": p, "topology": f"star:{p}", "collective": collective, "training": training, "recovery": {"policy": "rebuild"},
                "faults": [{"kind": "preempt", "rank": p - 1, "at": "2ms", "return_after": "0.5ms"}, second]}

    def traced(self, document):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(document))
            return traced_run(path)

    def assert_completed(self, trace, p, dropped):
        summary = trace["summary"]
        self.assertTrue(summary["verified"])
        self.assertEqual(summary["rounds_completed"], self.ROUNDS)
        self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
        self.assertEqual(sorted({d for e in trace["recovery"] for d in e["dropped_ranks"]}), dropped)
        self.assertEqual(summary["recovery_quality"]["healthy_dropped"], [])

    def test_a_member_struck_during_the_share_leaves_and_the_joiner_rejoins_later(self):
        share_step = ALPHA + 16 * MiB / B
        round_1 = 0.003 + ring_time(self.P, 16 * MiB, B)
        cases = [("preempt", 3, 0.0055), ("preempt", 3, 0.007), ("preempt", 0, 0.009),
                 ("link-down", 3, round_1 + 2.2 * share_step), ("preempt", 3, round_1 + 2.5 * share_step)]
        for kind, rank, at in cases:
            with self.subTest(kind=kind, rank=rank, at=at):
                self.assertLess(at, round_1 + 3 * share_step)
                second = {"kind": kind, "rank": rank, "at": f"{at * 1e3:.4f}ms"}
                if kind == "link-down":
                    second["duration"] = "1ms"
                trace = self.traced(self.scenario(second))
                self.assert_completed(trace, self.P, sorted({self.JOINER, rank}))
                [second_drop] = [e for e in trace["recovery"] if rank in e["dropped_ranks"]]
                self.assertEqual(second_drop["dropped_ranks"], [rank])
                self.assertEqual(second_drop["postponed_ranks"], [self.JOINER])
                self.assertNotIn(self.JOINER, second_drop["group"])
                # Admitted again after that rebuild, at the round after the one it resumes.
                rejoin = trace["recovery"][trace["recovery"].index(second_drop) + 1]
                self.assertEqual(rejoin["joined_ranks"], [self.JOINER])
                self.assertEqual(rejoin["round"], second_drop["round"] + 1)
                final = [r for r in range(self.P) if r != rank]
                self.assertEqual(trace["summary"]["final_group"], final)
                self.assertEqual(trace["rounds"][-1]["group"], final)

    def test_the_joiner_cut_off_during_its_share_is_dropped(self):
        # (a host is preempted once: the joiner's own link goes down instead)
        trace = self.traced(self.scenario({"kind": "link-down", "rank": self.JOINER, "at": "8ms"}))
        self.assert_completed(trace, self.P, [self.JOINER])
        self.assertEqual(trace["summary"]["final_group"], list(range(self.JOINER)))

    def test_other_algorithms_and_layered_training(self):
        for algorithm, p, layered, at in [("binary-tree", 16, False, "8ms"), ("recursive-doubling", 8, True, "7ms"),
                                          ("ring", 16, True, "9ms")]:
            with self.subTest(algorithm=algorithm, p=p, layered=layered):
                trace = self.traced(self.scenario({"kind": "preempt", "rank": 3, "at": at}, algorithm, p, layered))
                self.assert_completed(trace, p, [3, p - 1])
                self.assertEqual(trace["summary"]["final_group"], [r for r in range(p) if r != 3])


class TwoWorkersReturning(unittest.TestCase):
    """Two preempted workers back at about the same time (ring, binary tree, 16 MiB on
    star:8, 3 ms of compute): each is dropped once, for its own preemption, and rejoins, in
    the same round or each at its own (a group switch per round, kept until the group
    reaches it); the second preemption 3 ms after the first strikes while the first one
    waits for the model (it is postponed, not dropped). It hung or exited 1 when a second
    admission replaced the first one's pending switch."""

    def test_both_rejoin_and_all_finish(self):
        p = 8
        for algorithm, gap in [("ring", 0.0), ("binary-tree", 1.0), ("ring", 3.0)]:
            document = {"workers": p, "topology": f"star:{p}", "collective": {"algorithm": algorithm, "size": "16MiB"},
                        "training": {"rounds": 6, "model": "linear-regression", "compute": "3ms"},
                        "recovery": {"policy": "rebuild"},
                        "faults": [{"kind": "preempt", "rank": 7, "at": "2ms", "return_after": "0.5ms"},
                                   {"kind": "preempt", "rank": 2, "at": f"{2 + gap}ms", "return_after": "0.6ms"}]}
            with self.subTest(algorithm=algorithm, gap=gap), tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "s.json"
                path.write_text(json.dumps(document))
                trace = traced_run(path, timeout=60)
                summary = trace["summary"]
                self.assertTrue(summary["verified"])
                self.assertEqual(summary["rounds_completed"], 6)
                self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
                dropped = [d for event in trace["recovery"] for d in event["dropped_ranks"]]
                self.assertEqual(sorted(dropped), [2, 7])
                self.assertEqual(summary["recovery_quality"]["healthy_dropped"], [])
                joined = {event["joined_ranks"][0] for event in trace["recovery"] if event["joined_ranks"]}
                self.assertEqual(joined, {2, 7})
                self.assertEqual(summary["final_group"], list(range(p)))
                self.assertEqual(trace["rounds"][-1]["group"], list(range(p)))


class SlowBackwardPass(unittest.TestCase):
    """Layered training: a rank whose backward pass slows down (its host 20x or 1000x
    slower, forward taking no time) makes its buckets late; the peers that wait for them
    find it computing past its deadline, and it is dropped. (Before, a rank waiting for
    its next bucket looked idle: nobody was found, and the run either went on 20x slower or
    stopped as stalled.)"""

    def test_the_slow_rank_is_dropped(self):
        backward = 0.002
        for algorithm, p, rank, factor, at_round in [("ring", 4, 2, 0.001, 1), ("ring", 8, 3, 0.05, 0),
                                                     ("recursive-doubling", 8, 5, 0.05, 1),
                                                     ("binary-tree", 8, 0, 0.05, 2)]:
            document = {"workers": p, "topology": f"star:{p}", "collective": {"algorithm": algorithm, "size": "1MiB"},
                        "training": {"rounds": 4, "bucket": "256KiB", "model": "linear-regression",
                                     "layers": {"uniform": {"count": 4, "parameters": 262144, "forward": 0,
                                                            "backward": backward}}},
                        "faults": [{"kind": "slow-host", "rank": rank, "factor": factor, "at_round": at_round}],
                        "recovery": {"policy": "rebuild"}}
            with self.subTest(algorithm=algorithm, p=p, rank=rank, factor=factor), \
                    tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "s.json"
                path.write_text(json.dumps(document))
                trace = traced_run(path)
                summary = trace["summary"]
                dropped = sorted({d for event in trace["recovery"] for d in event["dropped_ranks"]})
                self.assertEqual(dropped, [rank])
                self.assertEqual(summary["recovery_quality"]["healthy_dropped"], [])
                self.assertEqual(summary["rounds_completed"], 4)
                self.assertTrue(summary["verified"])
                self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
                [drop] = [event for event in trace["recovery"] if event["dropped_ranks"]]
                self.assertEqual(drop["rule"], "others wait on it and it computes past its deadline (a straggler)")
                # Its backward pass takes backward / factor: found past 3x its nominal time,
                # long before it would have finished.
                self.assertLess(drop["detected"] - drop["fault_time"], backward / factor)


class LatencyChangeDuringFirstAlpha(unittest.TestCase):
    """SimGrid 3.32 never ends a transfer whose link's latency changes during its first
    alpha; collsim reschedules it once every such latency is paid (sim/faults.cpp). A
    latency fault at any instant of a ring step then only slows the run: under "none" it
    finishes (it used to stall, blaming rank 5 as lost); under "rebuild" too."""

    def test_the_run_finishes_whenever_the_latency_changes(self):
        for policy, at in itertools.product(["none", "rebuild"], ["1.0005ms", "1.001ms", "1.0013ms", "1.0021ms"]):
            with self.subTest(policy=policy, at=at):
                document = {"workers": 16, "topology": "star:16", "collective": {"algorithm": "ring", "size": "64KiB"},
                            "training": {"rounds": 3, "compute": "1ms", "model": "linear-regression"},
                            "faults": [{"kind": "slow-link", "rank": 5, "at": at, "latency": "100us"}],
                            "recovery": {"policy": policy}}
                with tempfile.TemporaryDirectory() as folder:
                    path = Path(folder) / "s.json"
                    path.write_text(json.dumps(document))
                    trace, _ = run(str(path))
                self.assertEqual(trace["summary"]["rounds_completed"], 3)
                self.assertTrue(trace["summary"]["verified"])
                if policy == "rebuild":
                    self.assertEqual(trace["summary"]["recovery_quality"]["healthy_dropped"], [])


class GivingUp(unittest.TestCase):
    """When recovery gives up, the trace says so: the last recovery[] entry is `stopped`,
    with the reason of summary.stalled, the evidence, and who was left."""

    def run_document(self, document, status=1):
        with tempfile.TemporaryDirectory() as folder:
            path, trace = Path(folder) / "s.json", Path(folder) / "t.json"
            path.write_text(json.dumps(document))
            done = bounded_run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace)], 120, cwd=REPO,
                               capture_output=True, text=True)
            self.assertEqual(done.returncode, status, done.stderr)
            return json.loads(trace.read_text()), done.stderr

    def assert_stopped(self, trace, stderr, left):
        stalled = trace["summary"]["stalled"]
        self.assertEqual(stderr.strip(), f"collsim: stalled: {stalled}")
        stop = trace["recovery"][-1]
        self.assertTrue(stop["stopped"])
        self.assertEqual(stop["dropped_ranks"], [])
        self.assertEqual(stop["group"], left)
        self.assertEqual(trace["summary"]["final_group"], left)
        self.assertTrue(stop["reason"].startswith("stopped: "))
        self.assertEqual(f"recovery gave up: {stop['reason'][len('stopped: '):]}.", stalled)
        return stop

    def test_a_wait_longer_than_the_whole_run_stops_with_a_trace_entry(self):
        # The torus link between ranks 2 and 3 gets 10 s of latency: their transfer moves
        # nothing for longer than the whole run, both ends look alike (undecided), and an
        # allgather's result follows the group ranks, so no other order of the members may
        # avoid the link (an allreduce's ring regroups around it: the next test). The
        # coordinator stops once a wait outlasts the whole run: 3 x rounds x (compute + the
        # ring allgather, well under 1 ms here).
        rounds, compute = 2, 0.020
        document = {"workers": 8, "topology": "torus:4x2",
                    "collective": {"kind": "allgather", "algorithm": "ring", "size": "256KiB"},
                    "training": {"rounds": rounds, "compute": compute},
                    "faults": [{"kind": "slow-link", "link": "torus_link_from_2_to_3", "at": "10ms", "latency": "10s"}],
                    "recovery": {"policy": "rebuild"}}
        trace, stderr = self.run_document(document)
        stop = self.assert_stopped(trace, stderr, list(range(8)))
        self.assertEqual(stop["rule"], "a wait longer than the whole run, and nobody to drop")
        self.assertRegex(stop["reason"], r"rank \d has waited on rank \d since [0-9.e-]+ s, longer than the whole run "
                                         r"should take \(([0-9.e-]+) s\)")
        limit = float(stop["reason"].split("should take (")[1].split(" s)")[0])
        self.assertGreater(limit, 3 * rounds * compute)
        self.assertLess(limit, 3 * rounds * (compute + 0.001))
        self.assertGreater(stop["rebuilt"] - stop["fault_time"], limit)
        self.assertTrue(any("waits on" in line for line in stop["evidence"]))

    def test_a_ring_regroups_around_a_link_that_never_delivers(self):
        # The same link under a ring: the ring's pairs can keep off it, so the same eight
        # regroup in another order (rule 5b's last bullet) and finish; nobody is dropped.
        document = {"workers": 8, "topology": "torus:4x2", "collective": {"algorithm": "ring", "size": "256KiB"},
                    "training": {"rounds": 2, "compute": 0.020},
                    "faults": [{"kind": "slow-link", "link": "torus_link_from_2_to_3", "at": "10ms", "latency": "10s"}],
                    "recovery": {"policy": "rebuild"}}
        with tempfile.TemporaryDirectory() as folder:
            path, trace_path = Path(folder) / "s.json", Path(folder) / "t.json"
            path.write_text(json.dumps(document))
            done = bounded_run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace_path)], 120, cwd=REPO,
                               capture_output=True, text=True)
            self.assertEqual((done.returncode, done.stderr), (0, ""))
            trace = json.loads(trace_path.read_text())
        self.assertEqual(trace["summary"]["rounds_completed"], 2)
        self.assertEqual(trace["summary"]["recovery_quality"]["dropped"], [])
        regroups = [e for e in trace["recovery"] if "regroup" in e["reason"]]
        self.assertTrue(regroups)
        self.assertEqual(sorted(regroups[-1]["group"]), list(range(8)))
        # Well under the link's 10 s: two rounds of 20 ms of computation and a short ring.
        self.assertLess(trace["summary"]["simulated_time"], 2 * (0.020 + 0.001) + 0.001)

    def test_a_ring_regroups_around_a_link_down_between_live_ranks(self):
        # The torus link between ranks 2 and 3 goes down for good: both ends are alive and
        # reach the coordinator, and their ring transfer breaks. The run stopped; the ring's
        # pairs can keep off the link, so the same eight now regroup in an order whose
        # neighbours' routes cross neither half (rule 1d) and finish, nobody dropped.
        document = {"workers": 8, "topology": "torus:4x2", "collective": {"algorithm": "ring", "size": "1MiB"},
                    "training": {"rounds": 3, "compute": "1ms", "model": "linear-regression"},
                    "faults": [{"kind": "link-down", "link": "torus_link_from_2_to_3", "at": "1.1ms"}],
                    "recovery": {"policy": "rebuild"}}
        trace, stderr = self.run_document(document, status=0)
        self.assertEqual(stderr, "")
        self.assertEqual(trace["summary"]["rounds_completed"], 3)
        self.assertEqual(trace["summary"]["recovery_quality"]["dropped"], [])
        self.assertTrue(trace["summary"]["models_identical"])
        regroup = [e for e in trace["recovery"] if "regroup" in e["reason"]]
        self.assertEqual(len(regroup), 1)
        self.assertIn("torus_link_from_2_to_3", regroup[0]["reason"])
        order = regroup[0]["group"]
        self.assertEqual(sorted(order), list(range(8)))
        # No ring neighbours are 2 and 3 (the link's only users on a 4x2 torus: x first).
        for i in range(8):
            self.assertNotEqual({order[i], order[(i + 1) % 8]}, {2, 3})

    def test_a_broken_transfer_nobody_can_be_blamed_for_stops_with_a_trace_entry(self):
        # torus:4x4x4, rank 35's NIC down for good: 35 is cut off and dropped; its link from
        # host 19 carries others' routes (16 -> 51), both ends alive. direct pairs every
        # member with every other, so no order keeps off the link: the run stops.
        document = {"workers": 64, "topology": "torus:4x4x4", "collective": {"algorithm": "direct", "size": "1MiB"},
                    "training": {"rounds": 4, "compute": "1ms", "model": "linear-regression"},
                    "faults": [{"kind": "link-down", "rank": 35, "at_round": 1}],
                    "recovery": {"policy": "rebuild"}}
        trace, stderr = self.run_document(document)
        stop = self.assert_stopped(trace, stderr, [r for r in range(64) if r != 35])
        self.assertIn("a transfer failed and the evidence cannot tell between ranks", stop["reason"])
        self.assertIn("torus_link_from_19_to_35_UP, which is down", stop["reason"])
        self.assertIn(51, stop["undecided_ranks"])
        self.assertTrue(any("lost its transfer" in line for line in stop["evidence"]))


class TreeAttribution(unittest.TestCase):
    """A NIC at 1% on one rank of a tree: the coordinator drops that rank and nobody else.
    Cases that broke: a binary tree's rank 1, whose transfer with a child ended on time at
    the instant the fault struck, was cleared and its healthy child 4 dropped first; a tree
    rank reaching a transfer that had finished was judged late from its start."""

    def scenario(self, algorithm, p, rank, layered):
        if layered:
            training = {"rounds": 4, "model": "linear-regression", "bucket": "2MiB",
                        "layers": {"uniform": {"count": 8, "parameters": 2097152, "forward": "1ms", "backward": "2ms"}}}
        else:
            training = {"rounds": 4, "compute": "3ms", "model": "linear-regression", "parameters": 1024}
        return {"workers": p, "topology": f"star:{p}", "collective": {"algorithm": algorithm, "size": "8MiB"},
                "training": training, "recovery": {"policy": "rebuild"},
                "faults": [{"kind": "slow-link", "rank": rank, "factor": 0.01, "at_round": 1}]}

    def test_only_the_slowed_rank_is_dropped(self):
        cases = [("binary-tree", 8, 1, False), ("binary-tree", 8, 1, True), ("binary-tree", 8, 4, False),
                 ("binary-tree", 16, 0, True), ("double-binary-tree", 8, 1, False), ("double-binary-tree", 16, 15, True),
                 ("naive-binomial", 8, 1, False), ("naive-binomial", 16, 15, False)]
        for algorithm, p, rank, layered in cases:
            with self.subTest(algorithm=algorithm, p=p, rank=rank, layered=layered), \
                    tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "s.json"
                path.write_text(json.dumps(self.scenario(algorithm, p, rank, layered)))
                trace = traced_run(path)
                summary = trace["summary"]
                dropped = sorted({d for event in trace["recovery"] for d in event["dropped_ranks"]})
                self.assertEqual(dropped, [rank])
                self.assertEqual(summary["recovery_quality"]["healthy_dropped"], [])
                self.assertTrue(summary["verified"])
                self.assertEqual(summary["rounds_completed"], 4)
                self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))


if __name__ == "__main__":
    unittest.main()
