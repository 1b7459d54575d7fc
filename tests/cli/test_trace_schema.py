"""The JSON trace (collsim-trace/2) as a user meets it: run the binary, validate the trace
against docs/trace.schema.json, and check a few figures computed here, independently.

Run with Debian's interpreter (it has python3-jsonschema):
    COLLSIM=build/collsim /usr/bin/python3 -m unittest -v test_trace_schema
"""
import copy
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import jsonschema

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCHEMA_PATH = HERE / "../../docs/trace.schema.json"
COLLSIM = os.environ.get("COLLSIM", "/work/main/build/collsim")
TWO_RACKS = REPO / "topologies" / "two-racks.xml"
TWO_ZONES = REPO / "topologies" / "two-zones.xml"

LINK_BW = 10e9  # bytes/s, the star generator's default (10GBps)
LINK_LAT = 1e-6  # s per link; a star route crosses two links
ALPHA = 2 * LINK_LAT


def ring_allreduce_time(p, n):
    """2(p-1) steps of alpha + (n/p)/B: the alpha-beta formula, exact on a star."""
    return 2 * (p - 1) * (ALPHA + n / p / LINK_BW)


def pipeline_broadcast_time(p, k, hop_time):
    """Chain broadcast from rank 0 in k segments, each rank forwarding segment j while it
    receives segment j+1 and waiting for both; a transfer starts once both sides posted it.
    hop_time(i) is the time of one segment from rank i to rank i+1."""
    begin = [[0.0] * k for _ in range(p)]     # rank i starts iteration j
    received = [[0.0] * k for _ in range(p)]  # rank i holds segment j
    for j in range(k):
        for i in range(p):
            if i > 0:
                posted = 0.0 if j == 0 else begin[i][j - 1]
                received[i][j] = max(begin[i - 1][j], posted) + hop_time(i - 1)
            if j == 0:
                begin[i][0] = received[i][0]
            else:
                waits = [begin[i][j - 1], received[i][j]]
                if i + 1 < p:
                    waits.append(received[i + 1][j - 1])
                begin[i][j] = max(waits)
    return max(max(begin[i][k - 1], received[i + 1][k - 1] if i + 1 < p else 0.0) for i in range(p))


class TraceSchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = json.loads(SCHEMA_PATH.read_text())
        jsonschema.Draft202012Validator.check_schema(cls.schema)
        cls.validator = jsonschema.Draft202012Validator(cls.schema)
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-trace-")
        cls.traces = {}

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def trace(self, name, *args):
        """Runs `collsim run ARGS --trace NAME.json` once per class and returns the trace."""
        if name not in self.traces:
            path = Path(self.folder.name) / f"{name}.json"
            run = subprocess.run([COLLSIM, "run", *args, "--trace", str(path), "--quiet"], cwd=self.folder.name,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, f"collsim run {' '.join(args)}: {run.stderr}")
            self.traces[name] = json.loads(path.read_text())
        return self.traces[name]

    def assert_valid(self, trace):
        errors = sorted(self.validator.iter_errors(trace), key=lambda e: list(e.path))
        self.assertEqual([], [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]])

    def assert_close(self, actual, expected, rel=1e-9):
        self.assertLessEqual(abs(actual - expected), rel * abs(expected), f"{actual} != {expected}")

    # Ring allreduce, 8 ranks, 1 MiB: 112 messages, listed one by one.
    def ring8(self):
        return self.trace("ring8", "--topology", "star:8", "--size", "1MiB")

    def test_small_ring_lists_every_message(self):
        trace = self.ring8()
        self.assert_valid(trace)
        p, n = 8, 1 << 20
        self.assertEqual(trace["format"], "collsim-trace/2")
        self.assertEqual(trace["messages_detail"], "full")
        self.assertEqual(trace["summary"]["message_count"], 2 * p * (p - 1))
        self.assertEqual(len(trace["messages"]), 2 * p * (p - 1))
        self.assertEqual({m["bytes"] for m in trace["messages"]}, {n // p})
        self.assertEqual({m["phase"] for m in trace["messages"]}, {"reduce-scatter", "allgather"})
        self.assertEqual({(m["src"] + 1) % p == m["dst"] for m in trace["messages"]}, {True})
        self.assertTrue(all(0 <= m["start"] <= m["end"] <= trace["summary"]["simulated_time"]
                            for m in trace["messages"]))

    def test_small_ring_times_equal_the_formula(self):
        summary = self.ring8()["summary"]
        self.assert_close(summary["simulated_time"], ring_allreduce_time(8, 1 << 20))
        self.assert_close(summary["collective_time"], ring_allreduce_time(8, 1 << 20))
        self.assert_close(summary["model_time"], ring_allreduce_time(8, 1 << 20))
        self.assert_close(summary["algbw"], (1 << 20) / summary["collective_time"])
        self.assert_close(summary["busbw"], summary["algbw"] * 2 * 7 / 8)
        self.assertTrue(summary["verified"])

    def test_small_ring_records_what_was_run(self):
        trace = self.ring8()
        self.assertEqual(trace["scenario"]["collective"]["kind"], "allreduce")
        self.assertEqual(trace["scenario"]["collective"]["algorithm"], "ring")
        self.assertEqual(trace["scenario"]["network"], "ideal")
        self.assertEqual(trace["platform"]["rank_hosts"], [f"host-{r}" for r in range(8)])
        self.assertEqual((trace["platform"]["alpha"], trace["platform"]["bandwidth"]), (ALPHA, LINK_BW))
        self.assertEqual(trace["payload"]["logical_bytes"], 1 << 20)
        # 1 MiB of float32 is 2^18 elements a rank; the carried budget, 2^20 over 8 ranks, holds 2^17 of them
        self.assertEqual(trace["payload"]["carried_elements"], min((1 << 20) // 4, (1 << 20) // 8))

    # Ring allreduce, 128 ranks: 32512 messages, above the 20000 limit: one entry per step.
    def test_many_messages_are_listed_per_step(self):
        trace = self.trace("ring128", "--topology", "star:128", "--size", "1MiB")
        self.assert_valid(trace)
        p, n = 128, 1 << 20
        self.assertEqual(trace["messages_detail"], "per-step")
        self.assertEqual(trace["summary"]["message_count"], 2 * p * (p - 1))
        self.assertEqual(len(trace["messages"]), 2 * (p - 1))
        self.assertEqual({(s["count"], s["bytes"]) for s in trace["messages"]}, {(p, n)})
        self.assertEqual(sorted((s["phase"], s["step"]) for s in trace["messages"]),
                         sorted((phase, step) for phase in ("reduce-scatter", "allgather") for step in range(p - 1)))
        self.assert_close(trace["summary"]["simulated_time"], ring_allreduce_time(p, n))

    # Above the store's limit the trace keeps the first 20000 messages as a sample, and counts
    # every message per rank: a ring rank sends and receives 2(p-1) chunks of n/p bytes.
    def test_many_messages_keep_a_sample_and_count_every_rank(self):
        trace = self.trace("ring128", "--topology", "star:128", "--size", "1MiB")
        p, n = 128, 1 << 20
        sample = trace["message_sample"]
        self.assertEqual((sample["kept"], sample["of"], sample["which"]), (20000, 2 * p * (p - 1), "first"))
        self.assertEqual(len(sample["messages"]), 20000)
        self.assertEqual({m["bytes"] for m in sample["messages"]}, {n // p})
        # the first recorded messages are those of the first steps (each step has p messages)
        self.assertEqual(max(m["step"] for m in sample["messages"] if m["phase"] == "reduce-scatter"), p - 2)
        expected = 2 * (p - 1)
        self.assertEqual(trace["ranks"], [{"rank": r, "sent": expected, "received": expected,
                                           "bytes_sent": expected * n // p, "bytes_received": expected * n // p}
                                          for r in range(p)])

    # The aggregates do not depend on what the store keeps: with every message, a sample or
    # none, the steps, ranks and links (their series too) are the same.
    def test_aggregates_do_not_depend_on_kept_messages(self):
        args = ("--topology", str(TWO_RACKS), "--workers", "16", "--size", "1MiB")
        every = self.trace("two-racks-all", *args, "--messages", "all")
        some = self.trace("two-racks-10", *args, "--messages", "10")
        none = self.trace("two-racks-none", *args, "--messages", "none")
        for trace in (every, some, none):
            self.assert_valid(trace)
        self.assertEqual(every["messages_detail"], "full")
        self.assertEqual(some["message_sample"]["messages"], every["messages"][:10])
        self.assertEqual((none["message_sample"]["kept"], none["message_sample"]["messages"]), (0, []))
        steps = {}
        for m in every["messages"]:
            key = (m["round"], m["epoch"], m["phase"], m["step"])
            count, size, start, end = steps.get(key, (0, 0, m["start"], m["end"]))
            steps[key] = (count + 1, size + m["bytes"], min(start, m["start"]), max(end, m["end"]))
        for trace in (some, none):
            self.assertEqual({(s["round"], s["epoch"], s["phase"], s["step"]): (s["count"], s["bytes"], s["start"], s["end"])
                              for s in trace["messages"]}, steps)
            self.assertEqual(trace["ranks"], every["ranks"])
            self.assertEqual(trace["summary"], every["summary"])
            # the series too, bin for bin: 128 to 256 bins covering the run, whatever is kept
            self.assertEqual(trace["links"], every["links"])
            self.assertTrue(128 <= trace["links"]["bins"] <= 256)
            self.assertGreaterEqual(trace["links"]["bins"] * trace["links"]["bin_width"], trace["summary"]["simulated_time"])

    def test_detail_full_lists_every_message_above_the_limit(self):
        p, n = 101, 101 * 4 * 64  # 20200 messages; 64 elements per chunk
        trace = self.trace("ring101full", "--topology", "star:101", "--size", str(n), "--detail", "full")
        self.assert_valid(trace)
        self.assertEqual(trace["messages_detail"], "full")
        self.assertEqual(len(trace["messages"]), 2 * p * (p - 1))
        self.assertEqual(trace["summary"]["message_count"], 2 * p * (p - 1))
        self.assert_close(trace["summary"]["simulated_time"], ring_allreduce_time(p, n))

    # Pipelined broadcast over two racks: the one slow inter-rack hop (rank 7 to rank 8) paces the chain.
    def test_pipeline_broadcast_on_two_racks(self):
        p, n, segment = 16, 4 << 20, 512 << 10
        trace = self.trace("pipeline", "--collective", "broadcast", "--algorithm", "pipeline", "--workers", str(p),
                           "--size", str(n), "--set", f"collective.segment={segment}", "--topology", str(TWO_RACKS))
        self.assert_valid(trace)
        k = n // segment
        self.assertEqual(trace["scenario"]["collective"]["kind"], "broadcast")
        self.assertEqual(trace["platform"]["kind"], "file")
        self.assertEqual(trace["platform"]["rank_hosts"], [f"host-{r}" for r in range(p)])
        self.assertEqual((trace["platform"]["alpha"], trace["platform"]["bandwidth"]), (12e-6, 1.25e9))
        self.assertEqual(trace["summary"]["message_count"], (p - 1) * k)
        self.assertEqual({m["bytes"] for m in trace["messages"]}, {segment})

        def hop(i):
            return 12e-6 + segment / 1.25e9 if i == 7 else ALPHA + segment / LINK_BW

        self.assert_close(trace["summary"]["simulated_time"], pipeline_broadcast_time(p, k, hop))

    # Hierarchical allreduce over the two zones of two-zones.xml: rings of 8 inside each zone,
    # 8 rings of 2 between them.
    def test_hierarchical_on_two_zones(self):
        p, n = 16, 1 << 20
        trace = self.trace("hierarchical", "--algorithm", "hierarchical", "--size", str(n), "--topology",
                           str(TWO_ZONES))
        self.assert_valid(trace)
        messages = trace["messages"]
        phases = {phase: [m for m in messages if m["phase"] == phase]
                  for phase in ("reduce-scatter", "inter-reduce-scatter", "inter-allgather", "allgather")}
        self.assertEqual(sum(map(len, phases.values())), len(messages))
        zone = lambda rank: rank // 8
        for phase in ("reduce-scatter", "allgather"):  # 2 zones x 8 ranks x 7 steps, n/8 each, inside a zone
            self.assertEqual(len(phases[phase]), 2 * 8 * 7)
            self.assertEqual({m["bytes"] for m in phases[phase]}, {n // 8})
            self.assertEqual({zone(m["src"]) == zone(m["dst"]) for m in phases[phase]}, {True})
        for phase in ("inter-reduce-scatter", "inter-allgather"):  # 8 rings of 2 ranks, 1 step, n/16 each
            self.assertEqual(len(phases[phase]), 8 * 2)
            self.assertEqual({m["bytes"] for m in phases[phase]}, {n // 16})
            self.assertEqual({(m["src"] + 8) % 16 == m["dst"] for m in phases[phase]}, {True})
        expected = 2 * 7 * (ALPHA + n / 8 / LINK_BW) + 2 * (12e-6 + n / 16 / (1.25e9 / 8))
        self.assert_close(trace["summary"]["simulated_time"], expected)
        self.assert_close(trace["summary"]["model_time"], expected)
        self.assertIn("hierarchical: 2 groups of 8 ranks (platform zones rack-a, rack-b)", " ".join(trace["notes"]))

    # Parameter server, 3 servers of 8 ranks: S(p-1) pushes, then as many pulls.
    def test_parameter_server_records_its_servers(self):
        p, n, servers = 8, 3 << 16, 3
        trace = self.trace("parameter-server", "--algorithm", "parameter-server", "--workers", str(p), "--topology",
                           f"star:{p}", "--size", str(n), "--set", f"collective.servers={servers}")
        self.assert_valid(trace)
        self.assertEqual(trace["scenario"]["collective"]["servers"], servers)
        for phase, into_servers in (("push", True), ("pull", False)):
            moved = [m for m in trace["messages"] if m["phase"] == phase]
            self.assertEqual(len(moved), servers * (p - 1))
            self.assertEqual({(m["dst"] if into_servers else m["src"]) < servers for m in moved}, {True})
            self.assertEqual({m["bytes"] for m in moved}, {n // servers})
        self.assert_close(trace["summary"]["simulated_time"], 2 * (ALPHA + (p - 1) * n / servers / LINK_BW))

    def test_deployed_servers_and_launch_costs_are_valid(self):
        trace = self.trace("deployed", "--algorithm", "parameter-server", "--workers", "4", "--topology", "star:8",
                           "--size", "48KiB", "--rounds", "2", "--set", "training.compute=1ms",
                           "--set", "collective.parameter_server.placement=dedicated",
                           "--set", "collective.parameter_server.per_node=2",
                           "--set", "collective.parameter_server.cpu_bandwidth=\"5GBps\"",
                           "--set", "collective.parameter_server.cpu_per_message=10us",
                           "--set", "training.launch.per_collective=50us")
        self.assert_valid(trace)
        self.assertEqual(trace["scenario"]["collective"]["parameter_server"]["per_node"], 2)
        launch = trace["scenario"]["training"]["launch"]
        self.assert_close(launch["per_collective"], 50e-6)
        self.assertEqual(launch["per_tensor"], 0)
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["parameter_server"]["hosts"], ["host-4", "host-5"])

    # The schema can fail: a missing field, a mistyped one, an unknown one, a wrong form.
    def test_layered_training_traces_are_valid(self):
        # buckets, activities (an abandoned one too), the recovery's bucket, memory_per_worker,
        # sharding and fusion in the scenario
        layers = "training.layers={\"uniform\": {\"count\": 8, \"parameters\": 4194304, \"forward\": \"8ms\", \"backward\": \"16ms\"}}"
        common = ["--workers", "4", "--topology", "star:4", "--algorithm", "ring", "--set", layers]
        variants = {
            "zero2": ["--set", "training.bucket=4MiB", "--set", "training.sharding=zero2", "--set", "training.batch=8"],
            "zero3": ["--set", "training.bucket=4MiB", "--set", "training.sharding=zero3", "--set", "training.overlap=forward"],
            "per-step": ["--set", "training.bucket=4MiB", "--messages", "none"],
            "fusion": ["--set", "training.fusion={\"buffer\": \"5MiB\", \"cycle\": \"6.5ms\"}"],
            "abandoned": ["--set", "training.bucket=4MiB", "--set", "recovery.policy=rebuild",
                          "--set", "faults=[{\"kind\": \"preempt\", \"rank\": 3, \"at\": \"16.2ms\"}]"]}
        for name, extra in variants.items():
            with self.subTest(name=name):
                trace = self.trace(f"layers-{name}", *common, *extra)
                self.assert_valid(trace)
                self.assertTrue(trace["activities"])
        self.assertTrue(any(a.get("abandoned") for a in self.traces["layers-abandoned"]["activities"]))
        self.assertEqual(self.traces["layers-abandoned"]["recovery"][0]["bucket"], 1)

    def test_schema_rejects_broken_traces(self):
        trace = self.ring8()
        breakages = {
            "summary.busbw removed": lambda t: t["summary"].pop("busbw"),
            "messages[3].phase removed": lambda t: t["messages"][3].pop("phase"),
            "summary.verified a string": lambda t: t["summary"].__setitem__("verified", "yes"),
            "scenario.network unknown": lambda t: t["scenario"].__setitem__("network", "fast"),
            "top-level field unknown": lambda t: t.__setitem__("extra", 1),
            "full messages as per-step": lambda t: t.__setitem__("messages_detail", "per-step"),
            "format /3": lambda t: t.__setitem__("format", "collsim-trace/3"),
            "messages[2].elements removed": lambda t: t["messages"][2].pop("elements"),
            "messages[2].elements one number": lambda t: t["messages"][2].__setitem__("elements", [4]),
            "collective.servers zero": lambda t: t["scenario"]["collective"].__setitem__("servers", 0),
        }
        for what, breakage in breakages.items():
            with self.subTest(what):
                broken = copy.deepcopy(trace)
                breakage(broken)
                with self.assertRaises(jsonschema.ValidationError):
                    self.validator.validate(broken)


# The hand-computed TP2 x PP2 x DP2 step of tests/sim/parallel_step_test.cpp: h = s = 2048, one
# GPT block per stage, vocabulary 1024, H100 at half its 989.5 TFLOP/s, star:8 at 1000 GB/s
# and 1 us per link; stage 1's last gradient to stage 0 shares its link with the first step
# of stage 1's data-parallel ring.
STEP_TP2_PP2_DP2 = {"topology": "star:8:1000GBps:1us",
                    "parallelism": {"tensor": 2, "pipeline": 2, "data": 2,
                                    "step": {"model": "tiny", "layers": 2, "hidden": 2048, "ffn_hidden": 8192,
                                             "sequence": 2048, "heads": 16, "kv_heads": 16, "global_batch": 2,
                                             "efficiency": 0.5, "algorithms": {"tensor": "ring", "data": "ring"}}}}


def step_tp2_pp2_dp2_time():
    return step_tp2_pp2_dp2_parts()["step"]


def step_tp2_pp2_dp2_parts():
    """The step and stage 0's pipeline wait, by hand: from its forward's end it waits for stage
    1 to send the gradient (the bubble: the activation's transfer, stage 1's forward, logits and
    backward), then for that message, at half its link beside stage 1's data ring."""
    h, s, vocab, speed, alpha, bw = 2048, 2048, 1024, 989.5e12 * 0.5, 2e-6, 1000e9
    f = (24 * s * h * h + 4 * s * s * h) / 2 / speed   # a block's forward on one of 2 tensor GPUs
    g = 2 * f                                         # its backward
    o = 2 * s * h * vocab / 2 / speed                 # the logits' forward
    n = 2 * s * h                                     # bf16 activations of one micro-batch
    a = 2 * (alpha + n / 2 / bw)                      # ring allreduce of n on 2 ranks
    q, q_shared = alpha + n / bw, alpha + 2 * n / bw  # a pipeline message, alone and at half the link
    block, embeddings = 12 * h * h + 13 * h, vocab * h + s * h
    w = 2 * alpha + 2 * (block + embeddings) / 2 / bw  # stage 0's gradients' ring allreduce on 2 ranks
    forward, backward = f + 2 * a, g + 2 * a
    return {"step": forward + q + forward + 3 * o + backward + q_shared + backward + w,
            "bubble": q + forward + 3 * o + backward, "messages": q_shared}


# Two direct allreduces on star:3 (10 GB/s, 1 us a link) sharing rank 0's links: A (8 MB on
# ranks 0, 1) and B (24 MB on ranks 0, 2) each take half the link until A is done, then B all.
SHARED_STAR3 = {"topology": "star:3",
                "parallelism": {"data": 3, "collectives": [
                    {"ranks": [[0, 1]], "algorithm": "direct", "size": 8e6},
                    {"ranks": [[0, 2]], "algorithm": "direct", "size": 24e6}]}}


class ParallelTraceTest(unittest.TestCase):
    """A parallel run's trace (docs/trace-format.md#parallel-runs) against the schema and
    against oracles worked out by hand."""

    @classmethod
    def setUpClass(cls):
        cls.validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-parallel-trace-")
        cls.traces = {}

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def trace(self, name, scenario):
        if name not in self.traces:
            folder = Path(self.folder.name)
            (folder / f"{name}.scenario.json").write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "run", f"{name}.scenario.json", "--trace", f"{name}.json", "--quiet"],
                                 cwd=folder, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.traces[name] = json.loads((folder / f"{name}.json").read_text())
        return self.traces[name]

    def assert_valid(self, trace):
        errors = sorted(self.validator.iter_errors(trace), key=lambda e: list(e.path))
        self.assertEqual([], [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]])

    def assert_close(self, actual, expected, rel=1e-9):
        self.assertLessEqual(abs(actual - expected), rel * abs(expected), f"{actual} != {expected}")

    def test_communicators_sharing_a_link_take_their_max_min_shares(self):
        trace = self.trace("shared", SHARED_STAR3)
        self.assert_valid(trace)
        alpha, bw, a, b = 2e-6, 10e9, 8e6, 24e6
        parallel = trace["parallel"]
        self.assertEqual(parallel["layout"], {"tensor": 1, "pipeline": 1, "data": 3, "expert": 1, "workers": 3})
        first, second = parallel["communicators"]
        self.assertEqual((first["name"], second["name"]), ("ranks", "ranks#2"))
        self.assertEqual(([g["ranks"] for g in first["groups"]], [g["ranks"] for g in second["groups"]]),
                         ([[0, 1]], [[0, 2]]))
        self.assert_close(first["time"], alpha + a / (bw / 2))            # 1602 us
        self.assert_close(second["time"], alpha + a / (bw / 2) + (b - a) / bw)  # 3202 us
        self.assert_close(first["groups"][0]["end"] - first["groups"][0]["start"], alpha + a / (bw / 2))
        self.assert_close(parallel["step_time"], alpha + (a + b) / bw)
        self.assertTrue(parallel["verified"] and all(g["verified"] for c in (first, second) for g in c["groups"]))
        self.assertEqual(parallel["checked_ranks"], 4)
        self.assertEqual(parallel["message_count"], 4)  # direct on 2 ranks: each sends its vector to the other
        lanes = {(i["rank"], i["lane"]) for i in parallel["intervals"]}
        self.assertEqual(lanes, {(0, "ranks"), (1, "ranks"), (0, "ranks#2"), (2, "ranks#2")})

    def test_a_step_trace_holds_its_hand_computed_figures(self):
        trace = self.trace("step", STEP_TP2_PP2_DP2)
        self.assert_valid(trace)
        parallel, want = trace["parallel"], step_tp2_pp2_dp2_time()
        figures = parallel["step"]["figures"]
        self.assert_close(parallel["step_time"], want)  # 1.67339 ms
        self.assert_close(figures["step_time"], want)
        self.assert_close(figures["tokens_per_second"], 2 * 2048 / want)  # global batch x sequence
        parts = step_tp2_pp2_dp2_parts()
        self.assertEqual(figures["critical_rank"] // 4, 0)  # a rank of stage 0 ends the step
        self.assert_close(figures["exposed"]["pipeline"], parts["bubble"] + parts["messages"])
        self.assert_close(figures["pipeline_messages"], parts["messages"])
        self.assert_close(figures["bubble_fraction"], parts["bubble"] / want)
        self.assert_close(figures["compute"] + sum(figures["exposed"].values()), want)
        self.assertEqual(parallel["step"]["collectives"], 4 * 2 * 2 + 4)
        self.assertTrue(parallel["verified"])
        names = [c["name"] for c in parallel["communicators"]]
        self.assertEqual(names, ["tensor", "pipeline", "data"])
        groups = {c["name"]: [g["ranks"] for g in c["groups"]] for c in parallel["communicators"]}
        # Megatron's order: tensor fastest, then data, then pipeline
        self.assertEqual(groups["tensor"], [[0, 1], [2, 3], [4, 5], [6, 7]])
        self.assertEqual(groups["data"], [[0, 2], [1, 3], [4, 6], [5, 7]])
        self.assertEqual(groups["pipeline"], [[0, 4], [1, 5], [2, 6], [3, 7]])
        for c in parallel["communicators"]:
            self.assertEqual(c["time"], figures["busy"][c["name"]])
            self.assertEqual(c["most_exposed"], figures["most_exposed"][c["name"]])
        self.assertEqual({i["lane"] for i in parallel["intervals"]}, {"compute", "tensor", "pipeline", "data"})
        # each collective's run: its group's first member in, last out, and its check
        runs = {(r["communicator"], r["group"], r["sequence"]): r for r in parallel["step"]["runs"]}
        self.assertEqual(len(runs), 4 * 2 * 2 + 4)
        self.assertTrue(all(r["verified"] and r["checked_ranks"] == 2 for r in runs.values()))
        h, s, speed, alpha, bw = 2048, 2048, 989.5e12 * 0.5, 2e-6, 1000e9
        f = (24 * s * h * h + 4 * s * s * h) / 2 / speed
        a = 2 * (alpha + 2 * s * h / 2 / bw)
        q = alpha + 2 * s * h / bw
        # stage 0's tensor group {0, 1}: half the block's forward, its allreduce, the other half, the second
        self.assert_close(runs[("tensor", 0, 0)]["start"], f / 2)
        self.assert_close(runs[("tensor", 0, 0)]["end"], f / 2 + a)
        self.assert_close(runs[("tensor", 0, 1)]["start"], f + a)
        self.assert_close(runs[("tensor", 0, 1)]["end"], f + 2 * a)
        # stage 1's {4, 5}: once the activations arrived (stage 0's forward, then the message)
        self.assert_close(runs[("tensor", 2, 0)]["start"], f + 2 * a + q + f / 2)
        # stage 0's data group {0, 2}: its gradients' ring ends the step
        self.assertEqual(runs[("data", 0, 0)]["collective"], "allreduce")
        self.assert_close(runs[("data", 0, 0)]["end"], want)

    def test_schema_rejects_broken_parallel_traces(self):
        trace = self.trace("shared", SHARED_STAR3)
        breakages = {
            "parallel.step_time removed": lambda t: t["parallel"].pop("step_time"),
            "a group without ranks": lambda t: t["parallel"]["communicators"][0]["groups"][0].pop("ranks"),
            "parallel.extra": lambda t: t["parallel"].__setitem__("extra", 1),
            "platform.rank_hosts removed": lambda t: t["platform"].pop("rank_hosts"),
            "an interval without a lane": lambda t: t["parallel"]["intervals"][0].pop("lane"),
            "parallel removed (then every section of one collective is required)": lambda t: t.pop("parallel"),
        }
        for what, breakage in breakages.items():
            with self.subTest(what):
                broken = copy.deepcopy(trace)
                breakage(broken)
                with self.assertRaises(jsonschema.ValidationError):
                    self.validator.validate(broken)


if __name__ == "__main__":
    unittest.main()
