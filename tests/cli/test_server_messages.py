"""Parameter server processes (collective.parameter_server placement "shared" or "dedicated")
in the trace: their pushes and pulls are listed in messages[] with the servers as endpoints
workers + s, counted in the summary's message_count (pushes carry the elements of their
shard; pulls leave from the server's own copy: elements null), and get a thread each in
--perfetto. Counts and elements are worked by hand: k pushers each send
shard s (split_evenly of the vector over S) to server s, and server s sends it back to each.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_server_messages
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, split_evenly


def run(p, deployment, topology, elements=1000, extra=()):
    scenario = {"name": "servers", "topology": topology, "workers": p, "network": "ideal",
                "collective": {"algorithm": "parameter-server", "size": 4 * elements,
                               "parameter_server": deployment}}
    with tempfile.TemporaryDirectory(prefix="collsim-servers-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        trace = Path(folder) / "t.json"
        done = subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet", *extra],
                              capture_output=True, text=True, timeout=120, cwd=folder)
        assert done.returncode == 0, done.stderr
        perfetto = Path(folder) / "p.json"
        return json.loads(trace.read_text()), (json.loads(perfetto.read_text()) if perfetto.exists() else None)


class ServerMessages(unittest.TestCase):
    def check_push_pull(self, trace, p, servers, pushers, elements):
        shards = split_evenly(elements, servers)
        pushes = [m for m in trace["messages"] if m["phase"] == "push"]
        pulls = [m for m in trace["messages"] if m["phase"] == "pull"]
        self.assertEqual(sorted((m["src"], m["dst"]) for m in pushes),
                         sorted((q, p + s) for q in pushers for s in range(servers)))
        self.assertEqual(sorted((m["src"], m["dst"]) for m in pulls),
                         sorted((p + s, q) for q in pushers for s in range(servers)))
        for m in pushes:  # sent from the rank's vector: its elements are the shard's
            self.assertEqual(m["elements"], list(shards[m["dst"] - p]))
            self.assertEqual(m["bytes"], 4 * shards[m["dst"] - p][1])
        for m in pulls:  # sent from the server's own copy, no rank's vector: elements null
            self.assertIsNone(m["elements"])
            self.assertEqual(m["bytes"], 4 * shards[m["src"] - p][1])
        self.assertEqual(trace["summary"]["message_count"], len(trace["messages"]))

    def test_dedicated_servers_are_endpoints_after_the_ranks(self):
        p, servers, elements = 4, 3, 1000  # shards of 334, 333, 333 elements
        trace, _ = run(p, {"placement": "dedicated", "hosts": ["host-4", "host-5", "host-6"]}, "star:7", elements)
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["parameter_server"]["hosts"],
                         ["host-4", "host-5", "host-6"])
        self.assertEqual(trace["summary"]["message_count"], 2 * servers * p)
        self.check_push_pull(trace, p, servers, range(p), elements)
        self.assertTrue(trace["summary"]["verified"])

    def test_local_aggregation_adds_the_node_messages(self):
        # nodes:2:3, one shared server per node: ranks 0 and 3 push; 2 (g - 1) messages inside each node
        p, servers, elements = 6, 2, 900
        trace, _ = run(p, {"placement": "shared", "per_node": 1, "local_aggregation": True}, "nodes:2:3", elements)
        self.assertEqual(trace["summary"]["message_count"], 2 * servers * 2 + 2 * 2 * 2)
        inside = [m for m in trace["messages"] if m["phase"] in ("node-reduce", "node-broadcast")]
        self.assertEqual(len(inside), 8)
        self.assertTrue(all(m["src"] < p and m["dst"] < p for m in inside))
        self.check_push_pull(trace, p, servers, [0, 3], elements)

    def test_a_shared_server_on_a_gpu_takes_its_own_workers_shard_by_the_loopback(self):
        # One rail or DGX node: server s beside GPU s. Its own worker's push and pull take SimGrid's
        # loopback (2 x its shard), not the GPU's NVLink port, which carries the p-1 other
        # workers' shards s (in, DOWN, in the push; out, UP, in the pull) and the worker's own
        # other shards (out to the other servers, back in): (p-1) n_s + (n - n_s) each way.
        # Before, the port also carried the local shard both ways: 2 n_s more.
        for topology, p, servers in (("rail:1:4", 4, 1), ("rail:1:8", 8, 3), ("dgx-h100:1", 8, 2)):
            elements = 10_000
            trace, _ = run(p, {"placement": "shared", "hosts": [f"node-0-gpu-{s}" for s in range(servers)]},
                           topology, elements)
            links = {link["name"]: link["bytes"] for link in trace["links"]["list"]}
            shards = split_evenly(elements, servers)
            for s in range(servers):
                shard = 4 * shards[s][1]
                for half in ("UP", "DOWN"):
                    self.assertEqual((p - 1) * shard + 4 * elements - shard, links[f"node-0-gpu-{s}_nvlink_{half}"],
                                     (topology, s, half))
            self.assertEqual(2 * 4 * elements, links["__loopback__"], topology)
            self.assertTrue(trace["summary"]["verified"])

    def test_perfetto_gives_each_server_a_thread(self):
        p = 3
        _, perfetto = run(p, {"placement": "dedicated", "hosts": ["host-3", "host-4"]}, "star:5",
                          extra=["--perfetto", "p.json"])
        names = {e["args"]["name"] for e in perfetto["traceEvents"] if e.get("name") == "thread_name"}
        self.assertIn("server 0 (host-3)", names)
        self.assertIn("server 1 (host-4)", names)
        sends = [e for e in perfetto["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("push")
                 and any("to server" in text for text in e.get("args", {}).get("sends", []))]
        self.assertTrue(sends)

    def test_ranks_serving_are_unchanged(self):
        # placement "workers": servers are ranks 0 .. S-1, 2 S (p - 1) messages between ranks
        trace, _ = run(5, {"placement": "workers"}, "star:5", extra=["--set", "collective.servers=2"])
        self.assertEqual(trace["summary"]["message_count"], 2 * 2 * 4)
        self.assertTrue(all(m["src"] < 5 and m["dst"] < 5 for m in trace["messages"]))


class PerNodeRunLimits(unittest.TestCase):
    """collective.parameter_server.per_node: before the platform is built the run limits count
    one node's servers; once the nodes place them, the run is counted again with all of them.
    Server processes: each of the p pushers sends one parcel to each of the S servers and
    gets one back, 2 S p messages a round (S = per_node x nodes)."""

    def refused(self, topology, p, per_node, rounds):
        scenario = {"name": "limits", "topology": topology, "workers": p, "network": "ideal",
                    "collective": {"algorithm": "parameter-server", "size": 4096,
                                   "parameter_server": {"placement": "shared", "per_node": per_node}},
                    "training": {"rounds": rounds}}
        with tempfile.TemporaryDirectory(prefix="collsim-servers-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            done = subprocess.run([COLLSIM, "run", str(path), "--quiet"], capture_output=True, text=True,
                                  timeout=120, cwd=folder)
            self.assertEqual(list(Path(folder).iterdir()), [path])  # no half-written output
            return done

    def test_every_nodes_servers_count(self):
        # (topology, p, per_node, nodes, rounds): one node's servers stay under 3e8 messages, all
        # the nodes' pass it
        for topology, p, per_node, nodes, rounds in (("nodes:16:8", 128, 1, 16, 80_000),
                                                     ("nodes:4:8", 32, 2, 4, 600_000)):
            one_node, placed = 2 * per_node * p * rounds, 2 * per_node * nodes * p * rounds
            self.assertLess(one_node, 3e8)
            self.assertGreater(placed, 3e8)
            done = self.refused(topology, p, per_node, rounds)
            self.assertEqual(done.returncode, 2, (topology, done.stderr))
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertIn(f"sends {placed:.3g} messages", done.stderr)


ALPHA, B = 2e-6, 10e9  # star:N: two 1 us links of 10 GB/s between hosts


def traced(scenario, *extra):
    with tempfile.TemporaryDirectory(prefix="collsim-servers-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        trace = Path(folder) / "t.json"
        done = subprocess.run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace), *extra],
                              capture_output=True, text=True, timeout=120, cwd=folder)
        if done.returncode != 0:
            return None, done
        return json.loads(trace.read_text()), done


class ServerRebuild(unittest.TestCase):
    """recovery.policy "rebuild" with server processes: a worker preempted for good is dropped,
    the servers hear of the survivors' group and serve the round it resumes from with the
    survivors only. On a star a push (and a pull) of k pushers into S servers takes
    alpha + k (n/S)/B: each server's link carries k shards of n/S, each worker's S of them."""

    def scenario(self, p, servers, placement, hosts, fault, size_mib, compute="10ms", **training):
        return {"name": "ps-rebuild", "topology": f"star:{p + (servers if placement == 'dedicated' else 0)}",
                "network": "ideal", "workers": p,
                "collective": {"algorithm": "parameter-server", "size": f"{size_mib}MiB",
                               "parameter_server": {"placement": placement, "hosts": hosts}},
                "training": {"rounds": 4, "compute": compute, "model": "linear-regression", "parameters": 1024,
                             **training},
                "faults": [fault], "recovery": {"policy": "rebuild", "timeout": "3x"}, "seed": 42}

    def check(self, trace, p, servers, dropped, size_mib, compute, partial=None):
        shard = size_mib * 2**20 / servers
        phase = lambda k: ALPHA + k * shard / B  # noqa: E731 (k pushers)
        [event] = trace["recovery"]
        survivors = [r for r in range(p) if r != dropped]
        self.assertEqual(event["dropped_ranks"], [dropped])
        self.assertEqual(event["group"], survivors)
        self.assertEqual(trace["summary"]["final_group"], survivors)
        self.assertTrue(trace["summary"]["verified"])  # the survivors' sums, in their rank order
        rounds = trace["rounds"]
        self.assertTrue(all(r["models_identical"] for r in rounds))
        for r in rounds:
            took, k = r["end"] - r["start"], (p if r["round"] < event["round"] else p - 1)
            if r["round"] not in (event["round"], partial):  # whole rounds: compute, push, pull
                self.assertAlmostEqual(took, compute + 2 * phase(k), delta=1e-9, msg=r)
        # the round redone: once the survivors hear of the new group (a control message away),
        # their pushes and the servers' pulls take the survivors' time
        redo = [m for m in trace["messages"] if m["round"] == event["round"] and m["epoch"] == event["epoch_after"]]
        start = min(m["start"] for m in redo)
        # (a rebuild during the round's compute: the survivors read their verdicts as it ends)
        self.assertLess(start - max(event["rebuilt"], rounds[event["round"]]["start"] + compute), 10e-6)
        self.assertGreaterEqual(start, event["rebuilt"])
        self.assertAlmostEqual(rounds[event["round"]]["end"], start + 2 * phase(p - 1), delta=1e-9)
        # every push and pull of the new epoch is a survivor's: S (p - 1) each way, a round
        pushers = {(m["round"], m["phase"]): set() for m in trace["messages"]}
        for m in trace["messages"]:
            if m["epoch"] == event["epoch_after"]:
                pushers[(m["round"], m["phase"])].add(m["src"] if m["phase"] == "push" else m["dst"])
        for rnd in range(event["round"], 4):
            for phase_name in ("push", "pull"):
                self.assertEqual(pushers[(rnd, phase_name)], set(survivors), (rnd, phase_name))
        count = sum(1 for m in trace["messages"] if m["epoch"] == event["epoch_after"])
        self.assertEqual(count, 2 * servers * (p - 1) * (4 - event["round"]))
        return event, phase

    def test_dedicated_servers_serve_the_survivors(self):
        # 4 workers, servers on host-4 and host-5; host-2 lost at 25 ms, in round 1's compute
        p, servers, size, compute = 4, 2, 16, 0.010
        trace, done = traced(self.scenario(p, servers, "dedicated", ["host-4", "host-5"],
                                           {"kind": "preempt", "host": "host-2", "at": "25ms"}, size))
        self.assertIsNotNone(trace, done.stderr)
        event, phase = self.check(trace, p, servers, 2, size, compute)
        self.assertEqual(event["round"], 1)
        # the survivors pushed (the servers wait on rank 2's push) and wait for the pull; the
        # detector expects one shard sharing the worker's link with the other server's:
        # alpha + 2 (n/S)/B, and "3x" of it passes
        round_1 = trace["rounds"][1]["start"] + compute
        self.assertAlmostEqual(event["detected"], round_1 + phase(p - 1) + 3 * (ALPHA + 2 * size * 2**20 / servers / B),
                               delta=1e-9)

    def test_a_worker_lost_at_any_moment(self):
        # host-2 lost in round 1's push (28 ms), in round 2's compute (40 ms), or in round 1's
        # pull (31 ms): then the survivors get their shards (faster once rank 2's flows are
        # gone: B/4 each until 31 ms, B/3 after), finish round 1 without it, and only the
        # servers' sends to rank 2 break: they report it, and the group resumes at round 2.
        # In the last round's pull (66 ms) the survivors, done, wait for the group, and redo
        # round 3 without rank 2.
        p, servers, size, compute = 4, 2, 16, 0.010
        shard = size * 2**20 / servers
        for at, round_lost in ((28, 1), (31, 2), (40, 2), (66, 3)):
            with self.subTest(at=at):
                trace, done = traced(self.scenario(p, servers, "dedicated", ["host-4", "host-5"],
                                                   {"kind": "preempt", "host": "host-2", "at": f"{at}ms"}, size))
                self.assertIsNotNone(trace, done.stderr)
                event, _ = self.check(trace, p, servers, 2, size, compute, partial=1 if at == 31 else None)
                self.assertEqual(event["round"], round_lost)
                if at == 31:
                    flowing = trace["rounds"][1]["start"] + compute + 2 * ALPHA + p * shard / B
                    done_by_31 = (at / 1000 - flowing) * B / p
                    self.assertAlmostEqual(trace["rounds"][1]["end"], at / 1000 + (shard - done_by_31) * (p - 1) / B,
                                           delta=1e-9)

    def test_shared_servers_other_sizes(self):
        # 6 workers, servers beside ranks 0 and 1 (their own worker's shard by the loopback: a
        # server's link carries the k - 1 others'), rank 4 lost as round 2 starts; 8 MiB
        p, servers, size, compute = 6, 2, 8, 0.004
        trace, done = traced(self.scenario(p, servers, "shared", ["host-0", "host-1"],
                                           {"kind": "preempt", "rank": 4, "at_round": 2}, size, compute="4ms"))
        self.assertIsNotNone(trace, done.stderr)
        shard = size * 2**20 / servers
        [event] = trace["recovery"]
        self.assertEqual(event["round"], 2)
        for r in trace["rounds"]:
            if r["round"] != 2:
                k = p if r["round"] < 2 else p - 1
                self.assertAlmostEqual(r["end"] - r["start"], compute + 2 * (ALPHA + (k - 1) * shard / B), delta=1e-9)
        self.assertTrue(trace["summary"]["verified"])
        self.assertEqual(trace["summary"]["final_group"], [0, 1, 2, 3, 5])

    def test_buckets_are_served_again_from_the_first(self):
        # layered training: the servers serve bucket by bucket; the redo starts from bucket 0
        scenario = self.scenario(6, 2, "shared", ["host-0", "host-1"], {"kind": "preempt", "rank": 4, "at_round": 2}, 8,
                                 bucket="2MiB",
                                 layers={"uniform": {"count": 4, "parameters": 2097152, "forward": "1ms",
                                                     "backward": "2ms"}})
        del scenario["training"]["compute"]
        trace, done = traced(scenario)
        self.assertIsNotNone(trace, done.stderr)
        self.assertEqual(trace["recovery"][0]["dropped_ranks"], [4])
        self.assertTrue(trace["summary"]["verified"])
        self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
        # 8 MiB in buckets of 2 MiB: 4 buckets, each pushed and pulled by the 5 survivors to and
        # from both servers, in round 2 (redone whole, from bucket 0) and round 3
        for rnd in (2, 3):
            count = sum(1 for m in trace["messages"] if m["round"] == rnd and m["epoch"] == 1)
            self.assertEqual(count, 2 * 4 * 2 * 5, rnd)

    def test_what_rebuild_cannot_do_with_servers_is_refused_in_one_line(self):
        base = self.scenario(4, 2, "dedicated", ["host-4", "host-5"], {"kind": "preempt", "host": "host-2", "at": "25ms"}, 16)
        cases = [
            (lambda d: d["faults"].__setitem__(0, {"kind": "slow-link", "link": "host-1_link", "factor": 0.1, "at": "25ms"}),
             'faults.0.kind: "slow-link"; with parameter server processes'),
            (lambda d: d["faults"].__setitem__(0, {"kind": "link-down", "link": "host-4_link", "at": "25ms"}),
             'faults.0.kind: "link-down"; with parameter server processes'),
            (lambda d: d["collective"]["parameter_server"].update(mode="asynchronous"),
             "collective.parameter_server.mode: asynchronous servers apply pushes as they arrive"),
        ]
        for change, expected in cases:
            scenario = json.loads(json.dumps(base))
            change(scenario)
            trace, done = traced(scenario)
            self.assertIsNone(trace, expected)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertIn(expected, done.stderr)


def stalled_run(scenario):
    """Runs the scenario quietly in a folder of its own (a stall report on stderr, no trace)."""
    with tempfile.TemporaryDirectory(prefix="collsim-servers-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        return subprocess.run([COLLSIM, "run", str(path), "--quiet"], capture_output=True, text=True, timeout=120,
                              cwd=folder)


class LostServer(unittest.TestCase):
    def test_under_none_the_stall_report_names_the_lost_server(self):
        # host-4 runs server 0 (dedicated), preempted at 25 ms in round 1's compute: the four
        # workers push into it at 26.71 ms (round 0 ends at 16.71 ms, 10 ms of compute) and wait
        scenario = ServerRebuild().scenario(4, 2, "dedicated", ["host-4", "host-5"],
                                            {"kind": "preempt", "host": "host-4", "at": "25ms"}, 16)
        scenario["recovery"]["policy"] = "none"
        done = stalled_run(scenario)
        self.assertEqual(done.returncode, 1, done.stderr)
        report = done.stderr.strip()
        self.assertIn("Parameter server 0 (host-4) was lost at 25 ms.", report)
        for rank in range(4):
            self.assertIn(f"Rank {rank} waits to send to parameter server 0 (on host-4) since 26.7149 ms.", report)
        self.assertTrue(report.endswith("The group waits forever: a lost server's shard of the model is gone (collsim "
                                        "restarts no server)."), report)


class ServerRebuildOtherFaults(unittest.TestCase):
    """A worker that comes back, and a slow worker, with server processes under "rebuild": 4
    workers on star:6, dedicated servers on host-4 and host-5, 16 MiB, 10 ms of compute. A push
    or pull of k pushers takes alpha + k (n/S)/B (ServerRebuild)."""

    P, S, SIZE, C = 4, 2, 16, 0.010

    def phase(self, k):
        return ALPHA + k * self.SIZE * 2**20 / self.S / B

    def run_with(self, fault):
        scenario = ServerRebuild().scenario(self.P, self.S, "dedicated", ["host-4", "host-5"], fault, self.SIZE)
        trace, done = traced(scenario)
        self.assertIsNotNone(trace, done.stderr)
        self.assertTrue(trace["summary"]["verified"])
        self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
        return trace

    def test_a_returning_worker_joins_the_servers_group(self):
        # host-2 lost at 25 ms (dropped, round 1 redone by 3), back at 45 ms: round 2 had started
        # (39.31 ms), so it joins at round 3. There the member with the model broadcasts it (a
        # binomial tree of the model's 16 MiB over 4 ranks: 2 steps of alpha + n/B on a star),
        # then the 4 compute and push to the servers, which serve the new group from round 3
        trace = self.run_with({"kind": "preempt", "host": "host-2", "at": "25ms", "return_after": "20ms"})
        dropped, joined = trace["recovery"]
        self.assertEqual((dropped["dropped_ranks"], dropped["round"]), ([2], 1))
        self.assertEqual((joined["joined_ranks"], joined["round"], joined["group"]), ([2], 3, [0, 1, 2, 3]))
        self.assertEqual(trace["summary"]["final_group"], [0, 1, 2, 3])
        rounds = {r["round"]: r for r in trace["rounds"]}
        self.assertAlmostEqual(rounds[2]["end"] - rounds[1]["end"], self.C + 2 * self.phase(3), delta=1e-9)
        share = 2 * (ALPHA + self.SIZE * 2**20 / B)
        self.assertAlmostEqual(rounds[3]["end"] - rounds[2]["end"], share + self.C + 2 * self.phase(4), delta=1e-9)
        # round 3's pushes and pulls: 4 pushers, each to and from both servers, in the new epoch
        pushers = {m["src"] if m["phase"] == "push" else m["dst"]
                   for m in trace["messages"] if m["round"] == 3 and m["phase"] in ("push", "pull")}
        self.assertEqual(pushers, {0, 1, 2, 3})
        count = sum(1 for m in trace["messages"] if m["round"] == 3 and m["phase"] in ("push", "pull"))
        self.assertEqual(count, 2 * self.S * self.P)
        self.assertTrue(all(m["epoch"] == joined["epoch_after"] for m in trace["messages"]
                            if m["round"] == 3 and m["phase"] in ("push", "pull")))

    def test_a_slow_worker_behind_the_servers_is_dropped(self):
        # host-2 at 0.1 of its speed from round 2 (which starts at 2 (C + 2 phase(4)) = 33.43 ms):
        # it would compute 10 C. The others push and wait for the servers' pulls; the servers
        # wait on rank 2's push, so the others wait on rank 2 through them, and when its
        # computation passes its deadline ("3x": 3 C after it began) it is a straggler, dropped
        # (keeping it would take 10 C a round). The 3 others redo round 2 (2 phase(3) after
        # their first push in the new group) and round 3 takes C + 2 phase(3).
        trace = self.run_with({"kind": "slow-host", "host": "host-2", "factor": 0.1, "at_round": 2})
        [event] = trace["recovery"]
        self.assertEqual((event["dropped_ranks"], event["round"], event["group"]), ([2], 2, [0, 1, 3]))
        self.assertEqual(event["rule"], "others wait on it and it computes past its deadline (a straggler)")
        self.assertEqual(event["prices"]["chosen"], "drop")
        rounds = trace["rounds"]
        for r in rounds[:2]:
            self.assertAlmostEqual(r["end"] - r["start"], self.C + 2 * self.phase(4), delta=1e-9, msg=r)
        round_2 = 2 * (self.C + 2 * self.phase(4))
        self.assertAlmostEqual(rounds[2]["start"], round_2, delta=1e-9)
        self.assertAlmostEqual(event["rebuilt"], round_2 + 3 * self.C, delta=1e-8)
        redo = [m for m in trace["messages"] if m["epoch"] == event["epoch_after"] and m["round"] == 2]
        start = min(m["start"] for m in redo)
        self.assertLess(start - event["rebuilt"], 10e-6)
        self.assertAlmostEqual(rounds[2]["end"], start + 2 * self.phase(3), delta=1e-9)
        self.assertAlmostEqual(rounds[3]["end"] - rounds[2]["end"], self.C + 2 * self.phase(3), delta=1e-9)

    def test_a_worker_at_half_speed_is_dropped_by_its_computation(self):
        # at 0.5 its computation ends within its deadline at half its pace: a slow computation,
        # judged as a straggler; dropping it pays over the rounds left, and the servers serve the
        # 3 others from the round it is dropped in
        trace = self.run_with({"kind": "slow-host", "host": "host-2", "factor": 0.5, "at_round": 1})
        [event] = trace["recovery"]
        self.assertEqual(event["dropped_ranks"], [2])
        self.assertIn("slow computation", event["rule"])
        self.assertEqual(trace["summary"]["final_group"], [0, 1, 3])
        for r in trace["rounds"]:
            if r["round"] > event["round"]:
                self.assertAlmostEqual(r["end"] - r["start"], self.C + 2 * self.phase(3), delta=1e-9, msg=r)


class LostServerUnderRebuild(unittest.TestCase):
    """recovery.policy "rebuild" with a parameter server's host preempted: the coordinator is
    told at that instant, and the group resumes the round in flight with the servers left,
    the vector split evenly over them in planned order (shard i on the i-th server left), as
    if the run had started with them alone; with placement "shared" the worker beside the
    lost server is dropped with it. No server left: the run stops, one line, exit 1. On a
    star a push (and a pull) of k pushers into S servers takes alpha + k (n/S)/B: each
    server's link carries k shards of n/S (ServerRebuild)."""

    STOP = ('collsim: stalled: recovery gave up: parameter server {s} (on {host}) was lost at {at:g} s, and no '
            'parameter server is left: its shard of the gradient goes with it.')

    def dedicated(self, p, hosts, faults, size_mib, compute="10ms"):
        scenario = ServerRebuild().scenario(p, len(hosts), "dedicated", hosts, faults[0], size_mib, compute=compute)
        scenario["faults"] = faults
        return scenario

    def stopped(self, scenario):
        with tempfile.TemporaryDirectory(prefix="collsim-servers-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            trace = Path(folder) / "t.json"
            done = subprocess.run([COLLSIM, "run", str(path), "--quiet", "--trace", str(trace)], capture_output=True,
                                  text=True, timeout=120, cwd=folder)
            self.assertEqual(done.returncode, 1, done.stderr)
            return json.loads(trace.read_text()), done.stderr.strip()

    def regrouped(self, trace, event, p, left_endpoints, size_mib, compute, rounds=4):
        """The rounds from the event's on: each server left holds its even shard of the vector
        (in planned order), the round resumed ends 2 (alpha + p (n/S')/B) after its first push,
        and every later round takes C + 2 (alpha + p (n/S')/B)."""
        servers = len(left_endpoints)
        shard = size_mib * 2**20 / servers
        phase = ALPHA + p * shard / B
        new = [m for m in trace["messages"] if m["epoch"] == event["epoch_after"]]
        self.assertEqual(len(new), 2 * servers * p * (rounds - event["round"]))
        self.assertTrue(all(m["bytes"] == shard for m in new))
        # shard i (of the vector's elements, in order) on the i-th server left
        pushes = [m for m in new if m["phase"] == "push" and m["src"] == 0 and m["round"] == event["round"]]
        self.assertEqual([m["dst"] for m in sorted(pushes, key=lambda m: m["elements"][0])], left_endpoints)
        self.assertEqual(sorted(m["elements"][0] for m in pushes)[0], 0)
        resumed = trace["rounds"][event["round"]]
        start = min(m["start"] for m in new if m["round"] == event["round"])
        self.assertAlmostEqual(resumed["end"], start + 2 * phase, delta=1e-9)
        rounds_ = trace["rounds"]
        for before, r in zip(rounds_[event["round"]:], rounds_[event["round"] + 1:]):
            self.assertAlmostEqual(r["end"] - before["end"], compute + 2 * phase, delta=1e-9, msg=r)
        self.assertTrue(trace["summary"]["verified"])
        self.assertTrue(all(r["models_identical"] for r in trace["rounds"]))
        return start

    def test_a_dedicated_server_lost_at_any_moment(self):
        # 4 workers, 3 servers on host-4, host-5, host-6, 12 MiB (shards of n/3, then n/2), 10 ms
        # of compute: round 0 ends at 10 ms + 2 (2 us + 4 x 0.4194304 ms) = 13.3594432 ms; host-5
        # (server 1) lost in round 1's compute (20 ms), push (24 ms), pull (26 ms), and in round
        # 2's compute (30 ms: round 1 ended at 26.7188864 ms). Servers 0 and 2 (host-4, host-6)
        # serve from the round in flight on, shard 0 and shard 1 of the vector split over two.
        p, size, compute = 4, 12, 0.010
        round_0 = compute + 2 * (ALPHA + p * size * 2**20 / 3 / B)
        for at, resumed in ((0.020, 1), (0.024, 1), (0.026, 1), (0.030, 2)):
            with self.subTest(at=at):
                trace, done = traced(self.dedicated(p, ["host-4", "host-5", "host-6"],
                                                    [{"kind": "preempt", "host": "host-5", "at": f"{at * 1e3:g}ms"}],
                                                    size))
                self.assertIsNotNone(trace, done.stderr)
                [event] = trace["recovery"]
                self.assertEqual(event["rule"], "a parameter server lost")
                self.assertEqual((event["lost_servers"], event["servers"]), ([1], ["host-4", "host-6"]))
                self.assertEqual((event["dropped_ranks"], event["group"], event["round"]), ([], [0, 1, 2, 3], resumed))
                self.assertAlmostEqual(event["detected"], at, delta=1e-15)  # told when lost, not at a deadline
                self.assertNotIn("stopped", event)
                self.assertIn("its shard goes to the servers left, 0 (on host-4), 2 (on host-6), the vector split "
                              "over them", event["reason"])
                for r in trace["rounds"][:resumed]:
                    self.assertAlmostEqual(r["end"] - r["start"], round_0, delta=1e-9, msg=r)
                start = self.regrouped(trace, event, p, [4, 6], size, compute)
                # the redo starts once the workers read their verdicts: a control message after
                # the loss (waiting) or after their computation (computing)
                computing_until = trace["rounds"][resumed]["start"] + compute
                self.assertGreaterEqual(start, max(at, computing_until))
                self.assertLess(start - max(at, computing_until), 10e-6)

    def test_a_shared_server_lost_with_its_worker(self):
        # placement "shared", servers beside ranks 1 and 2 on star:4, 16 MiB: host-2 lost in round
        # 1's compute takes rank 2 and server 1. Rank 2 is dropped, server 0 (beside rank 1) holds
        # the whole vector: its link carries the pushes of ranks 0 and 3 (rank 1's by the
        # loopback), each round C + 2 (alpha + 2 n/B) after the one before (rank 1, its pull
        # by the loopback over first, starts each round early)
        p, size, compute = 4, 16, 0.010
        scenario = ServerRebuild().scenario(p, 2, "shared", ["host-1", "host-2"],
                                            {"kind": "preempt", "host": "host-2", "at": "25ms"}, size)
        scenario["topology"] = "star:4"
        trace, done = traced(scenario)
        self.assertIsNotNone(trace, done.stderr)
        [event] = trace["recovery"]
        self.assertEqual((event["lost_servers"], event["servers"]), ([1], ["host-1"]))
        self.assertEqual((event["dropped_ranks"], event["dropped_hosts"]), ([2], ["host-2"]))
        self.assertEqual((event["group"], event["round"]), ([0, 1, 3], 1))
        self.assertEqual(trace["summary"]["final_group"], [0, 1, 3])
        self.assertAlmostEqual(trace["rounds"][0]["end"] - trace["rounds"][0]["start"],
                               compute + 2 * (ALPHA + 3 * size * 2**20 / 2 / B), delta=1e-9)
        for before, r in zip(trace["rounds"][1:], trace["rounds"][2:]):
            self.assertAlmostEqual(r["end"] - before["end"], compute + 2 * (ALPHA + 2 * size * 2**20 / B), delta=1e-9)
        new = [m for m in trace["messages"] if m["epoch"] == event["epoch_after"] and m["phase"] == "push"]
        self.assertEqual({m["dst"] for m in new}, {4})  # server 0's endpoint
        self.assertEqual(sorted(m["src"] for m in new if m["round"] == 2), [0, 1, 3])
        self.assertTrue(trace["summary"]["verified"])

    def test_a_server_lost_after_a_worker_was_dropped(self):
        # host-2 (rank 2) lost at 25 ms and dropped; then host-5 (server 1) at 60 ms, in round 3's
        # compute: server 0 alone serves the 3 survivors from round 3, C + 2 (alpha + 3 n/B)
        p, size, compute = 4, 16, 0.010
        trace, done = traced(self.dedicated(p, ["host-4", "host-5"],
                                            [{"kind": "preempt", "host": "host-2", "at": "25ms"},
                                             {"kind": "preempt", "host": "host-5", "at": "60ms"}], size))
        self.assertIsNotNone(trace, done.stderr)
        dropped, lost = trace["recovery"]
        self.assertEqual(dropped["dropped_ranks"], [2])
        self.assertEqual((lost["lost_servers"], lost["servers"], lost["group"]), ([1], ["host-4"], [0, 1, 3]))
        self.assertEqual(lost["round"], 3)
        self.assertEqual(lost["epoch_before"], dropped["epoch_after"])
        new = [m for m in trace["messages"] if m["epoch"] == lost["epoch_after"]]
        self.assertEqual(len(new), 2 * 3)
        resumed = trace["rounds"][3]
        start = min(m["start"] for m in new)
        self.assertAlmostEqual(resumed["end"], start + 2 * (ALPHA + 3 * size * 2**20 / B), delta=1e-9)
        self.assertTrue(trace["summary"]["verified"])

    def test_no_server_left_stops_the_run(self):
        # one server (host-4) lost in round 1's compute: nobody can take over its shard
        trace, stderr = self.stopped(self.dedicated(4, ["host-4"], [{"kind": "preempt", "host": "host-4",
                                                                     "at": "25ms"}], 16))
        self.assertEqual(stderr, self.STOP.format(s=0, host="host-4", at=0.025))
        [event] = trace["recovery"]
        self.assertTrue(event["stopped"])
        self.assertEqual((event["rule"], event["lost_servers"], event["servers"]), ("a parameter server lost", [0], []))
        self.assertEqual((event["detected"], event["dropped_ranks"], event["group"]), (0.025, [], [0, 1, 2, 3]))
        self.assertFalse(trace["summary"]["verified"])
        # two servers lost one after the other: the first regroups onto the second, the second stops
        trace, stderr = self.stopped(self.dedicated(4, ["host-4", "host-5"],
                                                    [{"kind": "preempt", "host": "host-4", "at": "25ms"},
                                                     {"kind": "preempt", "host": "host-5", "at": "60ms"}], 16))
        self.assertEqual(stderr, self.STOP.format(s=1, host="host-5", at=0.06))
        first, last = trace["recovery"]
        self.assertEqual((first["lost_servers"], first["servers"]), ([0], ["host-5"]))
        self.assertEqual((last["lost_servers"], last["servers"], last["stopped"]), ([1], [], True))


class StallReport(unittest.TestCase):
    def test_a_stall_names_the_servers_as_servers(self):
        # 4 workers, 2 dedicated servers on host-4 and host-5 (endpoints 4 and 5); host-2 lost in
        # round 1 under recovery.policy none: the others wait for server 0's pull (the server
        # waits for rank 2's push), named as the server on its host, not as "rank 4"
        scenario = {"name": "stall", "topology": "star:6", "workers": 4, "network": "ideal",
                    "collective": {"algorithm": "parameter-server", "size": "16MiB",
                                   "parameter_server": {"placement": "dedicated", "hosts": ["host-4", "host-5"]}},
                    "training": {"rounds": 3, "compute": "10ms"},
                    "faults": [{"kind": "preempt", "host": "host-2", "at": "25ms"}]}
        done = stalled_run(scenario)
        self.assertEqual(done.returncode, 1, done.stderr)
        report = done.stderr.strip()
        self.assertTrue(report.startswith("collsim: stalled: the group stalled in round 1"), report)
        self.assertIn("Rank 2 (host-2) was preempted at 25 ms.", report)
        for rank in (0, 1, 3):
            self.assertIn(f"Rank {rank} waits to receive from parameter server 0 (on host-4) since", report)
        self.assertNotIn("rank 4", report)
        self.assertTrue(report.endswith('With recovery.policy "none" the group waits forever; "rebuild" would drop '
                                        "the lost worker and go on."), report)


if __name__ == "__main__":
    unittest.main()
