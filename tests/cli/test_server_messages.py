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


if __name__ == "__main__":
    unittest.main()
