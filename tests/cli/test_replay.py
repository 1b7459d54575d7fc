"""training.replay: a bucket collective identical to one simulated alone before takes the
recorded times and messages (sim/replay.hpp). Each scenario runs twice, replay on and off,
each in its own process (one SimGrid engine per process): every time of the trace (rounds,
each rank's compute and comm intervals, every message, the per-step totals, the links'
bytes and busy time) must agree to 1e-9, and the on-run must have replayed collectives.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -B -m unittest -v test_replay
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

# 8 equal layers of 1 M parameters (4 MB of float32): with a 4 MB cap each is a bucket of
# its own, ready every 10 ms of backward; an allreduce of 4 MB takes well under 10 ms on
# these platforms, so each runs alone: all but the first are replayable.
LAYERS = {"uniform": {"count": 8, "parameters": 8_000_000, "forward": "40ms", "backward": "80ms"}}
NODES = "nodes:2:4:10GBps:6GBps"
REL = 1e-9


def collsim_run(scenario, *args, expect=0, messages="all"):
    with tempfile.TemporaryDirectory(prefix="collsim-replay-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        trace = Path(folder) / "t.json"
        run = subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet", "--messages", messages, *args],
                             capture_output=True, text=True, timeout=300)
        if expect is None:
            return run
        if run.returncode != expect:
            raise AssertionError(f"exit {run.returncode}, wanted {expect}: {run.stderr}")
        return json.loads(trace.read_text()) if expect == 0 else run


def scenario(algorithm="ring", topology=NODES, workers=8, channels=None, rounds=2, **training):
    collective = {"algorithm": algorithm}
    if channels:
        collective["channels"] = channels
    return {"name": "replay", "topology": topology, "workers": workers, "collective": collective,
            "training": {"rounds": rounds, "layers": LAYERS, "bucket": "4MB", **training}}




class ReplayAgainstSimulation(unittest.TestCase):
    def assertClose(self, expected, actual, what):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * REL + 1e-15, msg=what)

    def compare(self, base):
        """Runs `base` with replay off and on; returns the on-run's trace after checking
        that every time agrees."""
        off_scenario = json.loads(json.dumps(base))
        off_scenario["training"]["replay"] = False
        off, on = collsim_run(off_scenario), collsim_run(base)
        self.assertEqual(off["summary"]["replayed_collectives"], 0)
        self.assertEqual(off["summary"]["replay_off"], "training.replay is false")
        for trace in (off, on):
            self.assertTrue(trace["summary"]["verified"])
        for key in ("simulated_time", "collective_time", "comm_time", "iteration_time", "exposed_comm"):
            self.assertClose(off["summary"][key], on["summary"][key], key)
        self.assertEqual(off["summary"]["message_count"], on["summary"]["message_count"])
        for a, b in zip(off["rounds"], on["rounds"], strict=True):
            for key in ("start", "end", "compute", "collective", "comm", "exposed_comm"):
                self.assertClose(a[key], b[key], f"round {a['round']} {key}")
        self.assertEqual(off["ranks"], on["ranks"])
        self.compare_activities(off, on)
        # each link's busy time follows which message had which time: the same whenever every
        # message kept its own time
        self.compare_links(off, on, busy=self.compare_messages(off, on))
        return on

    def compare_activities(self, off, on):
        def lanes(trace):
            return {(a["rank"], a["round"], a["lane"], a.get("bucket", a.get("layer")), a["what"]): a
                    for a in trace["activities"]}
        a, b = lanes(off), lanes(on)
        self.assertEqual(a.keys(), b.keys())
        for key in a:
            self.assertClose(a[key]["start"], b[key]["start"], f"{key} start")
            self.assertClose(a[key]["end"], b[key]["end"], f"{key} end")
            self.assertNotIn("replayed", a[key])

    def compare_messages(self, off, on):
        """The same messages (pairs, bytes, elements) and, step by step, the same times. Which of
        the flows of one step that share a link gets which time follows SimGrid's order of
        posting them (direct's exchange), which a replay does not repeat: times are compared as
        each step's sorted list."""
        def steps(trace):
            found = {}
            for m in trace["messages"]:
                key = (m["round"], m.get("bucket", -1), m["phase"], m["step"])
                pairs, times = found.setdefault(key, ([], []))
                pairs.append((m["src"], m["dst"], m["bytes"], tuple(m["elements"] or ())))
                times.append((m["start"], m["end"]))
            return found
        a, b = steps(off), steps(on)
        self.assertEqual(a.keys(), b.keys())
        same_pairs = True
        for key in a:
            self.assertEqual(sorted(a[key][0]), sorted(b[key][0]), key)
            for x, y in zip(sorted(a[key][1]), sorted(b[key][1]), strict=True):
                self.assertClose(x[0], y[0], f"{key} start")
                self.assertClose(x[1], y[1], f"{key} end")
            timed = [sorted(zip(t[0], t[1])) for t in (a[key], b[key])]
            same_pairs = same_pairs and all(abs(x[1][1] - y[1][1]) <= abs(x[1][1]) * REL for x, y in zip(*timed))
        return same_pairs

    def compare_links(self, off, on, busy):
        a = {link["name"]: link for link in off["links"]["list"]}
        b = {link["name"]: link for link in on["links"]["list"]}
        self.assertEqual(a.keys(), b.keys())
        for name in a:
            self.assertEqual((a[name]["bytes"], a[name]["flows"]), (b[name]["bytes"], b[name]["flows"]), name)
            if busy:
                self.assertEqual(a[name]["peak_flows"], b[name]["peak_flows"], name)
            if busy:
                self.assertClose(a[name]["busy_time"], b[name]["busy_time"], f"{name} busy_time")

    def replayed(self, trace, workers=8):
        return sum(1 for a in trace["activities"] if a.get("replayed")) // workers

    def test_every_allreduce_algorithm(self):
        listed = subprocess.run([COLLSIM, "list", "algorithms"], capture_output=True, text=True, check=True).stdout
        names = [line.split()[1] for line in listed.splitlines() if line.startswith("allreduce ")]
        compared = []
        for name in names:
            with self.subTest(algorithm=name):
                # an algorithm this platform cannot run (NCCL's need GPUs) refuses in one line
                if collsim_run(scenario(name), expect=None).returncode == 2:
                    continue
                on = self.compare(scenario(name))
                if "replay_off" not in on["summary"]:
                    self.assertGreater(on["summary"]["replayed_collectives"], 0)
                    compared.append(name)
        # ring, naive, tree, halving-doubling, ... : most of the registry replays here
        self.assertGreaterEqual(len(compared), 8, compared)

    def test_a_lone_bucket_is_replayed_every_time_after_the_first(self):
        # On a star every rank of a ring ends together and the buckets wait for backward:
        # 8 buckets x 2 rounds, one simulated, 15 replayed.
        on = self.compare(scenario("ring", topology="star:8:10GBps:1us"))
        self.assertEqual(on["summary"]["replayed_collectives"], 15)
        self.assertEqual(self.replayed(on), 15)

    def test_queued_buckets_replay_when_their_ranks_leave_together(self):
        # Backward of 1 ms for 8 buckets of 4 MiB: every bucket is ready long before the one
        # before it ends, so each starts as its ranks leave the last one. A ring of 8 channels
        # on two DGX H100 (4096 elements per chunk: no rank carries more than another) has
        # every rank leave at one instant, though in several scheduling rounds of it (one
        # rank per node at a time): every bucket after the first starts with all ranks
        # together, as the first did: 8 x 2 - 1 replayed, the same times.
        base = scenario("ring", topology="dgx-h100:2", workers=16, channels=8)
        base["training"]["layers"] = {"uniform": {"count": 8, "parameters": 8 * 2**20, "forward": "1ms",
                                                  "backward": "1ms"}}
        base["training"]["bucket"] = "4MiB"
        on = self.compare(base)
        self.assertEqual(on["summary"]["replayed_collectives"], 15)
        comm = sorted((a for a in on["activities"] if a["lane"] == "comm" and a["rank"] == 0),
                      key=lambda a: a["start"])
        self.assertTrue(all(b["start"] == a["end"] for a, b in zip(comm, comm[1:]) if a["round"] == b["round"]))

    def test_channels(self):
        on = self.compare(scenario("ring", channels=4))
        self.assertGreater(on["summary"]["replayed_collectives"], 0)

    def test_unequal_buckets(self):
        layers = [{"name": f"l{i}", "parameters": n, "forward": "1ms", "backward": "10ms"}
                  for i, n in enumerate([300_000, 1_000_000, 1_000_000, 300_000, 1_000_000, 1_000_000])]
        base = scenario("ring")
        base["training"]["layers"] = layers
        base["training"]["bucket"] = "1MB"
        on = self.compare(base)
        self.assertGreater(on["summary"]["replayed_collectives"], 0)

    def test_zero2_and_zero3(self):
        # zero3's gathers follow each other and its collectives declare no next gate: on a star,
        # whose ranks end a ring together, they replay; on two nodes fewer do (zero2 still some)
        for sharding, topology in (("zero2", NODES), ("zero2", "star:8:10GBps:1us"), ("zero3", "star:8:10GBps:1us"),
                                   ("zero3", NODES)):
            with self.subTest(sharding=sharding, topology=topology):
                on = self.compare(scenario("ring", topology=topology, sharding=sharding))
                if topology != NODES or sharding == "zero2":
                    self.assertGreater(on["summary"]["replayed_collectives"], 0)

    def test_totals_when_the_store_keeps_a_sample(self):
        # With --messages 50 the trace lists each step's totals (a replay adds its record's, not
        # its messages): the same counts and bytes, the same times, and each link the same
        # bytes, flows, busy time and peak; its series the same bytes in all (moved by bins).
        base = scenario("ring", topology="star:8:10GBps:1us")
        off_scenario = json.loads(json.dumps(base))
        off_scenario["training"]["replay"] = False
        off, on = collsim_run(off_scenario, messages="50"), collsim_run(base, messages="50")
        self.assertEqual(on["summary"]["replayed_collectives"], 15)
        self.assertEqual(off["summary"]["message_count"], on["summary"]["message_count"])
        self.assertEqual(len(on["messages"]), 16 * 2 * 7)  # 16 rings of 2 x 7 steps

        def steps(trace):
            return {(m["round"], m.get("bucket", -1), m["phase"], m["step"]): m for m in trace["messages"]}
        a, b = steps(off), steps(on)
        self.assertEqual(a.keys(), b.keys())
        for key in a:
            self.assertEqual((a[key]["count"], a[key]["bytes"]), (b[key]["count"], b[key]["bytes"]), key)
            self.assertClose(a[key]["start"], b[key]["start"], f"{key} start")
            self.assertClose(a[key]["end"], b[key]["end"], f"{key} end")
        self.assertEqual(off["ranks"], on["ranks"])
        links_off = {link["name"]: link for link in off["links"]["list"]}
        links_on = {link["name"]: link for link in on["links"]["list"]}
        self.assertEqual(links_off.keys(), links_on.keys())
        for name, x in links_off.items():
            y = links_on[name]
            self.assertEqual((x["bytes"], x["flows"], x["peak_flows"]), (y["bytes"], y["flows"], y["peak_flows"]), name)
            self.assertClose(x["busy_time"], y["busy_time"], f"{name} busy_time")
            self.assertClose(x["peak_at"], y["peak_at"], f"{name} peak_at")
            if "series" in x:
                self.assertLessEqual(abs(sum(x["series"]) - sum(y["series"])), len(x["series"]), name)


    def test_a_fault_turns_replay_off_only_for_the_collectives_it_touches(self):
        # Three rounds on a star (a ring's ranks end together: every bucket but the first
        # replays without faults); a link slowed during part of one round, at its start or at a
        # time: the same times as the simulation, no replayed bucket overlaps the fault, and the
        # rounds before and after it replay.
        faults = {
            "at round 1 for 60 ms": {"kind": "slow-link", "rank": 3, "at_round": 1, "factor": 0.25, "duration": "60ms"},
            "at 180 ms for 15 ms": {"kind": "slow-link", "rank": 3, "at": "180ms", "factor": 0.25, "duration": "15ms"},
        }
        for name, fault in faults.items():
            with self.subTest(fault=name):
                base = scenario("ring", topology="star:8:10GBps:1us", rounds=3)
                base["faults"] = [fault]
                on = self.compare(base)
                self.assertNotIn("replay_off", on["summary"])
                events = {e["action"]: e["time"] for e in on["faults"]}
                struck, undone = events["applied"], events["undone"]
                replayed = [a for a in on["activities"] if a.get("replayed")]
                # (round 0's last bucket ends as the fault strikes: round 1 starts then)
                self.assertTrue(all(a["end"] <= struck or a["start"] >= undone for a in replayed), name)
                rounds = {a["round"] for a in replayed}
                self.assertEqual(rounds, {0, 1, 2}, name)
                # the fault's round: the buckets it slowed are simulated (8 ranks each)
                self.assertLess(self.replayed(on), 23)
                self.assertGreater(self.replayed(on), 15)


class ReplayOff(unittest.TestCase):
    def test_streams_turn_it_off(self):
        trace = collsim_run(scenario("ring", streams=2))
        self.assertEqual(trace["summary"]["replay_off"], "training.streams above 1")

    def test_a_stream_behind_backward_on_uneven_ranks_is_simulated(self):
        # Backward of 1 ms for 8 buckets of 4 MB across a 6 GB/s NIC: every bucket is ready
        # before the one before it ends, so each starts as its ranks leave the last one;
        # on two nodes they do not all leave together: nothing is alone, nothing replayed.
        base = scenario("ring", rounds=1)
        base["training"]["layers"] = {"uniform": {"count": 8, "parameters": 8_000_000, "forward": "1ms",
                                                  "backward": "1ms"}}
        off_scenario = json.loads(json.dumps(base))
        off_scenario["training"]["replay"] = False
        on, off = collsim_run(base), collsim_run(off_scenario)
        self.assertAlmostEqual(off["summary"]["simulated_time"], on["summary"]["simulated_time"],
                               delta=off["summary"]["simulated_time"] * REL)

    def test_bad_values(self):
        base = scenario("ring")
        base["training"]["replay"] = "yes"
        run = collsim_run(base, expect=2)
        self.assertEqual(run.stderr.strip(), "collsim: error: training.replay: must be true or false")


class RoundsReplay(ReplayAgainstSimulation):
    """Rounds without layers: each round computes, then runs the collective on the whole
    vector; from the round whose entries match one simulated alone, it is replayed. Every
    time agrees with the run that simulates each round (replay false) to 1e-9."""

    def compare_rounds(self, base):
        off_scenario = json.loads(json.dumps(base))
        off_scenario["training"]["replay"] = False
        off, on = collsim_run(off_scenario), collsim_run(base)
        self.assertEqual(off["summary"]["replayed_collectives"], 0)
        for trace in (off, on):
            self.assertTrue(trace["summary"]["verified"])
        for key in ("simulated_time", "collective_time"):
            self.assertClose(off["summary"][key], on["summary"][key], key)
        self.assertEqual(off["summary"]["message_count"], on["summary"]["message_count"])
        for a, b in zip(off["rounds"], on["rounds"], strict=True):
            for key in ("start", "end", "compute", "collective"):
                self.assertClose(a[key], b[key], f"round {a['round']} {key}")
        self.compare_links(off, on, busy=self.compare_messages(off, on))
        return on

    def plain(self, algorithm, collective="allreduce", topology="nodes:4:4", rounds=4, compute="1ms", **extra):
        return {"name": "rounds", "topology": topology, "workers": 16,
                "collective": {"kind": collective, "algorithm": algorithm, "size": "1MiB", **extra},
                "training": {"rounds": rounds, "compute": compute}}

    def test_every_allreduce_algorithm_and_the_halves(self):
        cases = [(a, "allreduce") for a in ("ring", "naive", "naive-binomial", "binary-tree", "double-binary-tree",
                                            "recursive-doubling", "rabenseifner", "direct", "hierarchical",
                                            "parameter-server")]
        cases += [("ring", "reduce-scatter"), ("recursive-halving", "reduce-scatter"), ("ring", "allgather"),
                  ("recursive-doubling", "allgather")]
        for algorithm, collective in cases:
            with self.subTest(algorithm=algorithm, collective=collective):
                on = self.compare_rounds(self.plain(algorithm, collective))
                # round 0 is simulated and recorded; later rounds whose entries repeat a record's
                # offsets replay it (at least the last two of four)
                self.assertGreaterEqual(on["summary"]["replayed_collectives"], 2, on["summary"].get("replay_off"))

    def test_channels_a_model_and_another_platform(self):
        for base in (self.plain("ring", channels=4), self.plain("ring", topology="torus:4x4"),
                     {**self.plain("ring", rounds=5), "training": {"rounds": 5, "compute": "1ms",
                                                                 "model": "linear-regression"}}):
            with self.subTest(base=base["topology"], collective=base["collective"]):
                on = self.compare_rounds(base)
                self.assertGreaterEqual(on["summary"]["replayed_collectives"], 2)

    def test_what_is_not_replayed_says_why(self):
        for base, why in ((self.plain("binomial", "broadcast"), "a broadcast is not replayed"),
                          (self.plain("ring", rounds=1), "one collective")):
            with self.subTest(why=why):
                trace = collsim_run(base)
                self.assertEqual(trace["summary"].get("replayed_collectives", 0), 0)
                if base["training"]["rounds"] > 1:
                    self.assertIn(why, trace["summary"]["replay_off"])


if __name__ == "__main__":
    unittest.main()
