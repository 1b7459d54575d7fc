"""The iteration as facts: the trace's buckets and per-rank activities (each layer's forward
and backward, each bucket's collective), checked against the hand recurrence of
docs/training.md on an ideal star, and drawn as lanes in the SVG timeline, the HTML report
and the Perfetto export; a fault during a bucket's collective names that bucket.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training_lanes
"""
import json
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

ALPHA, B = 2e-6, 10e9  # star:P: two 1 us links of 10 GB/s between any two ranks
P = 4
COUNT, PARAMETERS = 8, 4194304
N = PARAMETERS * 4
FORWARD, BACKWARD = 8e-3, 16e-3
LAYERS = {"uniform": {"count": COUNT, "parameters": PARAMETERS, "forward": "8ms", "backward": "16ms"}}


def ring(n_bytes, p=P):
    return 2 * (p - 1) * (ALPHA + n_bytes / (p * B))


def run(training, faults=None, recovery=None, outputs=("trace",), collective=None, extra_args=()):
    """Runs the scenario; returns {output: text} for trace, svg, html, perfetto."""
    scenario = {"name": "lanes", "topology": f"star:{P}", "workers": P,
                "collective": collective or {"algorithm": "ring"}, "training": training}
    if faults:
        scenario["faults"] = faults
    if recovery:
        scenario["recovery"] = recovery
    with tempfile.TemporaryDirectory(prefix="collsim-lanes-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        files = {"trace": "t.json", "svg": "t.svg", "html": "t.html", "perfetto": "p.json"}
        args = [COLLSIM, "run", str(path), "--quiet", *extra_args]
        for output in outputs:
            args += [f"--{output}", str(Path(folder) / files[output])]
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            written = [name for name in files.values() if (Path(folder) / name).exists()]
            raise AssertionError(f"exit {done.returncode}, wrote {written}\n{done.stderr}")
        return {output: (Path(folder) / files[output]).read_text() for output in outputs}


class Lanes(unittest.TestCase):
    def assertClose(self, expected, actual, rel=1e-9):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * rel + 1e-15)

    def expected_buckets(self, bucket_layers):
        """Hand plan: buckets of `bucket_layers` equal layers, filled in backward order."""
        plan, last = [], COUNT - 1
        while last >= 0:
            first = max(0, last - bucket_layers + 1)
            plan.append({"first_layer": first, "last_layer": last,
                         "ready": (COUNT - first) * BACKWARD / COUNT})
            last = first - 1
        return plan

    def check_compute_lane(self, mine, start):
        forward = [a for a in mine if a["what"] == "forward"]
        backward = [a for a in mine if a["what"] == "backward"]
        self.assertEqual([a["layer"] for a in forward], list(range(COUNT)))
        self.assertEqual([a["layer"] for a in backward], list(reversed(range(COUNT))))
        for i, a in enumerate(forward):
            self.assertClose(start + i * FORWARD / COUNT, a["start"])
            self.assertClose(start + (i + 1) * FORWARD / COUNT, a["end"])
        for i, a in enumerate(backward):
            self.assertClose(start + FORWARD + i * BACKWARD / COUNT, a["start"])
            self.assertClose(start + FORWARD + (i + 1) * BACKWARD / COUNT, a["end"])

    def check_stream(self, comm, plan, start, collective):
        """Bucket b starts at max(start + F + ready_b, end of b-1) and takes `collective`."""
        self.assertEqual([a["bucket"] for a in comm], list(range(len(plan))))
        previous_end = 0
        for a, bucket in zip(comm, plan):
            expected_start = max(start + FORWARD + bucket["ready"], previous_end)
            self.assertClose(expected_start, a["start"])
            self.assertClose(expected_start + collective, a["end"])
            self.assertGreaterEqual(a["start"], previous_end)  # one collective at a time
            previous_end = a["end"]
        return previous_end

    def test_activities_follow_the_recurrence_when_buckets_hide(self):
        trace = json.loads(run({"layers": LAYERS, "bucket": "4MiB", "rounds": 2})["trace"])
        plan = self.expected_buckets(2)
        self.assertEqual(len(trace["buckets"]), 4)
        for b, (got, want) in enumerate(zip(trace["buckets"], plan)):
            self.assertEqual(got["bucket"], b)
            self.assertEqual((got["first_layer"], got["last_layer"]), (want["first_layer"], want["last_layer"]))
            self.assertEqual(got["parameters"], PARAMETERS // 4)
            self.assertEqual(got["bytes"], N / 4)
            self.assertClose(want["ready"], got["ready"])
        iteration = FORWARD + BACKWARD + ring(N / 4)
        for rank in range(P):
            for round_ in range(2):
                mine = [a for a in trace["activities"] if a["rank"] == rank and a["round"] == round_]
                start = round_ * iteration
                self.check_compute_lane([a for a in mine if a["lane"] == "compute"], start)
                end = self.check_stream([a for a in mine if a["lane"] == "comm"], plan, start, ring(N / 4))
                self.assertClose(start + iteration, end)
                self.assertTrue(all(a["epoch"] == 0 and "abandoned" not in a for a in mine))
        self.assertEqual(len(trace["activities"]), P * 2 * (2 * COUNT + 4))

    def test_activities_list_the_first_64_ranks(self):
        layers = {"uniform": {"count": 2, "parameters": 8192, "forward": "1ms", "backward": "2ms"}}
        scenario = {"name": "many", "topology": "star:66", "workers": 66, "collective": {"algorithm": "ring"},
                    "training": {"layers": layers}}
        with tempfile.TemporaryDirectory(prefix="collsim-lanes-") as folder:
            path, trace = Path(folder) / "s.json", Path(folder) / "t.json"
            path.write_text(json.dumps(scenario))
            subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet"], check=True, timeout=120)
            trace = json.loads(trace.read_text())
        self.assertEqual(sorted({a["rank"] for a in trace["activities"]}), list(range(64)))
        self.assertIn("the trace's activities (compute and comm lanes) list ranks 0 to 63 of 66", trace["notes"])

    def test_a_busy_stream_queues_the_buckets(self):
        # Backward of 0.2 ms: every bucket after the first waits for the one before it.
        layers = {"uniform": {"count": COUNT, "parameters": PARAMETERS, "forward": "1ms", "backward": "200us"}}
        trace = json.loads(run({"layers": layers, "bucket": "4MiB"})["trace"])
        comm = [a for a in trace["activities"] if a["rank"] == 2 and a["lane"] == "comm"]
        self.assertClose(1e-3 + 200e-6 / 4, comm[0]["start"])
        for previous, a in zip(comm, comm[1:]):
            self.assertClose(previous["end"], a["start"])
            self.assertClose(ring(N / 4), a["end"] - a["start"])

    def test_the_timeline_draws_a_compute_and_a_comm_lane_per_rank(self):
        out = run({"layers": LAYERS, "bucket": "4MiB"}, outputs=("trace", "svg", "html"))
        trace = json.loads(out["trace"])
        for picture in (out["svg"], out["html"]):
            bars = re.findall(r'<rect class="activity"[^>]*>', picture)
            self.assertEqual(len(bars), len(trace["activities"]))
            for rank in range(P):
                self.assertEqual(len([b for b in bars if f'data-rank="{rank}" data-lane="comm"' in b]), 4)
                self.assertEqual(len([b for b in bars if f'data-rank="{rank}" data-lane="compute"' in b]), 2 * COUNT)
                self.assertIn(f"rank {rank} comm", picture)
        # a bucket's bar sits where its interval is: x = left + time / end * width, in order
        bucket_x = [float(re.search(r' x="([0-9.]+)"', b).group(1))
                    for b in re.findall(r'<rect class="activity"[^>]*data-rank="0" data-lane="comm"[^>]*>', out["svg"])]
        self.assertEqual(bucket_x, sorted(bucket_x))

    def test_perfetto_has_compute_and_comm_threads_with_each_interval(self):
        out = run({"layers": LAYERS, "bucket": "4MiB"}, outputs=("trace", "perfetto"))
        trace, events = json.loads(out["trace"]), json.loads(out["perfetto"])["traceEvents"]
        threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        for rank in range(P):
            for lane in ("compute", "comm"):
                tid = [t for t, name in threads.items() if name == f"rank {rank} {lane}"]
                self.assertEqual(len(tid), 1)
                slices = sorted((e for e in events if e["ph"] == "X" and e["tid"] == tid[0]), key=lambda e: e["ts"])
                facts = [a for a in trace["activities"] if a["rank"] == rank and a["lane"] == lane]
                self.assertEqual(len(slices), len(facts))
                for s, a in zip(slices, facts):
                    key = "bucket" if lane == "comm" else "layer"
                    self.assertEqual(s["name"], f"{a['what']} {key} {a[key]}")
                    self.assertAlmostEqual(s["ts"], round(a["start"] * 1e9) / 1e3, delta=1e-6)
                    self.assertAlmostEqual(s["ts"] + s["dur"], round(a["end"] * 1e9) / 1e3, delta=1e-6)

    def test_a_preemption_during_a_bucket_names_it_and_the_new_group_redoes_the_round(self):
        # 8 layers of 3 MiB: buckets of two layers (6 MiB), whose rings split into whole
        # bytes over 4 ranks and over the 3 survivors (32 bytes per carried element).
        # Bucket 1 starts at F + ready_1 = 16 ms (bucket 0 ended long before); rank 3's host
        # dies 0.2 ms into it. The three survivors redo buckets 0 to 3 of round 0.
        parameters = 8 * 3 * 2 ** 18
        layers = {"uniform": {"count": COUNT, "parameters": parameters, "forward": "8ms", "backward": "16ms"}}
        trace = json.loads(run({"layers": layers, "bucket": "4MiB"},
                               faults=[{"kind": "preempt", "rank": 3, "at": "16.2ms"}],
                               recovery={"policy": "rebuild"},
                               collective={"algorithm": "ring", "carried_elements": parameters // 8})["trace"])
        [event] = trace["recovery"]
        self.assertEqual(event["bucket"], 1)
        self.assertEqual(event["dropped_ranks"], [3])
        plan, bucket_bytes = self.expected_buckets(2), parameters * 4 / 4
        self.assertLess(ring(bucket_bytes), 0.2e-3 + BACKWARD / 4)
        for rank in range(3):
            comm = [a for a in trace["activities"] if a["rank"] == rank and a["lane"] == "comm"]
            abandoned = [a for a in comm if a.get("abandoned")]
            self.assertEqual([(a["bucket"], a["epoch"]) for a in abandoned], [(1, 0)])
            self.assertClose(FORWARD + plan[1]["ready"], abandoned[0]["start"])
            self.assertGreaterEqual(abandoned[0]["end"], 16.2e-3)
            redo = [a for a in comm if a["epoch"] == 1]
            self.assertEqual([a["bucket"] for a in redo], [0, 1, 2, 3])
            # bucket 0 starts when this rank resumes and ends a ring after the last one did
            self.assertGreaterEqual(redo[0]["start"], event["resumed"])
            self.assertGreaterEqual(redo[0]["end"] - redo[0]["start"], ring(bucket_bytes, p=3) * (1 - 1e-9))
            for previous, a, bucket in zip(redo, redo[1:], plan[1:]):
                self.assertClose(max(FORWARD + bucket["ready"], previous["end"]), a["start"])
                self.assertClose(ring(bucket_bytes, p=3), a["end"] - a["start"])
        # the preempted rank's own bucket ends, abandoned, when its host dies
        preempted = [a for a in trace["activities"] if a["rank"] == 3 and a["lane"] == "comm"]
        self.assertEqual([(a["bucket"], a.get("abandoned", False)) for a in preempted], [(0, False), (1, True)])
        self.assertClose(FORWARD + plan[1]["ready"], preempted[1]["start"])
        self.assertClose(16.2e-3, preempted[1]["end"])


class Zero2(unittest.TestCase):
    """training.sharding "zero2": each bucket's reduce-scatter, (p-1)(alpha + n/(pB)) on the
    star, runs during backward; after the step, each bucket's allgather, the same time."""

    def assertClose(self, expected, actual, rel=1e-9):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * rel + 1e-15)

    def test_reduce_scatter_overlaps_backward_and_the_allgathers_follow_the_step(self):
        trace = json.loads(run({"layers": LAYERS, "bucket": "4MiB", "sharding": "zero2"})["trace"])
        half = (P - 1) * (ALPHA + N / 4 / (P * B))
        s = trace["summary"]
        self.assertTrue(s["verified"])  # the two halves make the allreduce
        self.assertClose(FORWARD + BACKWARD + half + 4 * half, s["iteration_time"])
        self.assertClose(8 * half, s["comm_time"])
        self.assertClose(5 * half, s["exposed_comm"])
        for rank in range(P):
            comm = [a for a in trace["activities"] if a["rank"] == rank and a["lane"] == "comm"]
            self.assertEqual([(a["what"], a["bucket"]) for a in comm],
                             [("reduce-scatter", b) for b in range(4)] + [("allgather", b) for b in range(4)])
            for a, b in zip(comm[:4], range(4)):
                self.assertClose(FORWARD + (b + 1) * BACKWARD / 4, a["start"])
            for previous, a in zip(comm[3:], comm[4:]):
                self.assertClose(previous["end"], a["start"])
                self.assertClose(half, a["end"] - a["start"])

    def test_memory_per_worker_shards_gradients_and_optimizer_states(self):
        # s = 4 bytes (float32), Adam 12 bytes per parameter: (2s + 12) P replicated,
        # s P + (s + 12) P / p with zero2
        plain = json.loads(run({"layers": LAYERS, "bucket": "4MiB"})["trace"])["summary"]
        sharded = json.loads(run({"layers": LAYERS, "bucket": "4MiB", "sharding": "zero2"})["trace"])["summary"]
        self.assertEqual(plain["memory_per_worker"], (2 * 4 + 12) * PARAMETERS)
        self.assertEqual(sharded["memory_per_worker"], 4 * PARAMETERS + (4 + 12) * PARAMETERS / P)

    def test_rabenseifner_splits_into_recursive_halving_and_doubling(self):
        trace = json.loads(run({"layers": LAYERS, "bucket": "4MiB", "sharding": "zero2"},
                               collective={"algorithm": "rabenseifner"})["trace"])
        self.assertTrue(trace["summary"]["verified"])
        # log2 p alpha + (p-1)/p n/B for each half
        half = 2 * ALPHA + (P - 1) / P * (N / 4) / B
        self.assertClose(FORWARD + BACKWARD + 5 * half, trace["summary"]["iteration_time"])

    def test_refusals(self):
        for training, collective, fragment in [
                ({"layers": LAYERS, "sharding": "zero4"}, None,
                 "training.sharding: unknown sharding 'zero4' (did you mean"),
                ({"compute": "1ms", "sharding": "zero2"}, {"algorithm": "ring", "size": "1MiB"},
                 "training.sharding: sharding splits the gradients of layers: give training.layers"),
                ({"layers": LAYERS, "sharding": "zero2"}, {"algorithm": "naive"},
                 "training.sharding: collective.algorithm 'naive' has no reduce-scatter and allgather halves")]:
            with self.subTest(fragment=fragment), self.assertRaises(AssertionError) as refused:
                run(training, collective=collective)
            lines = str(refused.exception).strip().splitlines()
            self.assertEqual(lines[0], "exit 2, wrote []")
            self.assertEqual(len(lines), 2)
            self.assertTrue(lines[1].startswith("collsim: error: " + fragment), lines[1])


class Fusion(unittest.TestCase):
    """training.fusion: Horovod's cycle fuses the gradients ready at each tick into buffers."""

    def assertClose(self, expected, actual, rel=1e-9):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * rel + 1e-15)

    def test_each_tick_fuses_what_is_ready_up_to_the_buffer(self):
        # Backward makes layer 7, 6, ..., 0 (2 MiB each) at 2, 4, ..., 16 ms. Ticks every
        # 6.5 ms: at 6.5 layers 7, 6, 5 are ready (6 MiB > the 5 MiB buffer: {7, 6}, {5});
        # at 13 layers 4, 3, 2 ({4, 3}, {2}); at 19.5 layers 1, 0 ({1, 0}).
        trace = json.loads(run({"layers": LAYERS, "fusion": {"buffer": "5MiB", "cycle": "6.5ms"}})["trace"])
        plan = [(6, 7, 6.5e-3), (5, 5, 6.5e-3), (3, 4, 13e-3), (2, 2, 13e-3), (0, 1, 19.5e-3)]
        self.assertEqual([(b["first_layer"], b["last_layer"]) for b in trace["buckets"]], [p[:2] for p in plan])
        for bucket, (first, last, tick) in zip(trace["buckets"], plan):
            self.assertClose(tick, bucket["ready"])
            self.assertEqual(bucket["bytes"], (last - first + 1) * N / COUNT)
        end = 0
        comm = [a for a in trace["activities"] if a["rank"] == 1 and a["lane"] == "comm"]
        for a, (first, last, tick) in zip(comm, plan):
            start = max(FORWARD + tick, end)
            end = start + ring((last - first + 1) * N / COUNT)
            self.assertClose(start, a["start"])
            self.assertClose(end, a["end"])
        s = trace["summary"]
        self.assertClose(max(FORWARD + BACKWARD, end), s["iteration_time"])
        self.assertEqual(s["buckets"], 5)
        self.assertTrue(s["verified"])

    def test_refusals(self):
        for training, fragment in [
                ({"layers": LAYERS, "bucket": "4MiB", "fusion": {"buffer": "5MiB", "cycle": "1ms"}},
                 "training.fusion: Horovod's fusion replaces DDP's buckets"),
                ({"layers": LAYERS, "fusion": {"buffer": "5MiB"}}, "training.fusion.cycle: missing"),
                ({"layers": LAYERS, "fusion": {"buffer": "5MiB", "cycle": 0}}, "training.fusion.cycle: must be a time > 0"),
                ({"layers": LAYERS, "fusion": {"buffer": "5MiB", "cycle": "1ms", "size": 1}},
                 "training.fusion.size: unknown key"),
                ({"layers": LAYERS, "fusion": {"buffer": "5MiB", "cycle": "1ms"}, "sharding": "zero2"},
                 "training.sharding: Horovod's fusion is not sharded")]:
            with self.subTest(fragment=fragment), self.assertRaises(AssertionError) as refused:
                run(training)
            lines = str(refused.exception).strip().splitlines()
            self.assertEqual(lines[0], "exit 2, wrote []")
            self.assertEqual(len(lines), 2)
            self.assertTrue(lines[1].startswith("collsim: error: " + fragment), lines[1])


if __name__ == "__main__":
    unittest.main()
