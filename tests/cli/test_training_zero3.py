"""ZeRO-3 (training.sharding "zero3") and per-layer forward overlap (training.overlap
"forward"), checked against a hand recurrence of docs/training.md written here, on an ideal
star where each half of a ring allreduce of n bytes takes (p-1)(alpha + n/(pB)).

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training_zero3
"""
import json
import unittest

from test_training_lanes import ALPHA, B, P, run

COUNT = 8


def layers(parameters):
    return {"uniform": {"count": COUNT, "parameters": parameters, "forward": "8ms", "backward": "16ms"}}


def zero3_by_hand(parameters, layers_per_bucket, prefetch, f=8e-3 / COUNT, bk=16e-3 / COUNT):
    """One iteration of equal layers; buckets of `layers_per_bucket` layers in backward order
    (bucket 0 holds the last layers). Returns (iteration, compute, comm, gather/scatter
    intervals in stream order as (what, bucket, start, end))."""
    units = [list(range(last - layers_per_bucket + 1, last + 1))
             for last in range(COUNT - 1, -1, -layers_per_bucket)]
    half = (P - 1) * (ALPHA + parameters * 4 / len(units) / (P * B))
    stream_free, ops = 0.0, []

    def op(what, bucket, gate):
        nonlocal stream_free
        start = max(stream_free, gate)
        stream_free = start + half
        ops.append((what, bucket, start, stream_free))
        return stream_free

    # forward: units in forward order, each layer after the previous one and its unit's gather
    fwd_start, fwd_end, device = {}, {}, 0.0
    gate = 0.0
    for b in reversed(range(len(units))):
        gathered = op("allgather", b, gate)
        for layer in units[b]:
            fwd_start[layer] = max(device, gathered)
            device = fwd_end[layer] = fwd_start[layer] + f
        # the next unit's gather: when this unit's forward starts (prefetch) or has ended
        gate = fwd_start[units[b][0]] if prefetch else fwd_end[units[b][-1]]
    # backward: unit 0's parameters once forward is over; then per unit the next unit's
    # gather (when this unit's backward starts) and this unit's reduce-scatter (when done)
    gathered = op("allgather", 0, device)
    for b, unit in enumerate(units):
        start_of_unit = None
        for layer in reversed(unit):
            start = max(device, gathered)
            start_of_unit = start if start_of_unit is None else start_of_unit
            device = start + bk
        if b + 1 < len(units):
            gathered = op("allgather", b + 1, start_of_unit)
        op("reduce-scatter", b, device)
    iteration = max(device, stream_free)
    return iteration, COUNT * (f + bk), len(ops) * half, ops


class Zero3(unittest.TestCase):
    def assertClose(self, expected, actual, rel=1e-9):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * rel + 1e-15)

    def check(self, parameters, bucket, layers_per_bucket, prefetch):
        training = {"layers": layers(parameters), "bucket": bucket, "sharding": "zero3"}
        if prefetch:
            training["overlap"] = "forward"
        trace = json.loads(run(training, outputs=("trace",))["trace"])
        s = trace["summary"]
        iteration, compute, comm, ops = zero3_by_hand(parameters, layers_per_bucket, prefetch)
        self.assertTrue(s["verified"], s.get("verification_failure"))
        self.assertClose(iteration, s["iteration_time"])
        self.assertClose(compute, s["compute_time"])
        self.assertClose(comm, s["comm_time"])
        self.assertClose(iteration - compute, s["exposed_comm"])
        self.assertClose((comm - (iteration - compute)) / comm, s["overlap_fraction"])
        for rank in range(P):
            stream = [a for a in trace["activities"] if a["rank"] == rank and a["lane"] == "comm"]
            self.assertEqual([(a["what"], a["bucket"]) for a in stream], [(w, b) for w, b, _, _ in ops])
            for a, (_, _, start, end) in zip(stream, ops):
                self.assertClose(start, a["start"])
                self.assertClose(end, a["end"])
        return s

    def test_gathers_shorter_than_a_layer(self):
        # 2 MiB per layer, 4 MiB buckets: each half 0.32 ms against 1 ms forward layers
        for prefetch in (False, True):
            with self.subTest(prefetch=prefetch):
                self.check(4194304, "4MiB", 2, prefetch)

    def test_gathers_longer_than_a_layer(self):
        # 16 MiB per layer, one layer per bucket: each half 1.26 ms against 1 ms forward
        # and 2 ms backward layers: the stream is the bottleneck in forward
        plain = self.check(33554432, "16MiB", 1, False)
        ahead = self.check(33554432, "16MiB", 1, True)
        self.assertLess(ahead["iteration_time"], plain["iteration_time"])

    def test_memory_per_worker_divides_everything_by_p(self):
        # s = 4 bytes, Adam 12 bytes per parameter: (2s + 12) P / p
        s = json.loads(run({"layers": layers(4194304), "bucket": "4MiB", "sharding": "zero3"})["trace"])["summary"]
        self.assertEqual(s["memory_per_worker"], (2 * 4 + 12) * 4194304 / P)

    def test_a_trained_model_stays_identical_and_learns(self):
        training = {"model": "linear-regression", "parameters": 64, "rounds": 5, "sharding": "zero3",
                    "layers": {"uniform": {"count": 4, "parameters": 4096, "forward": "1ms", "backward": "2ms"}},
                    "bucket": "4KiB"}
        for dtype in ("float32", "float64"):
            with self.subTest(dtype=dtype):
                trace = json.loads(run(training, collective={"algorithm": "ring", "dtype": dtype})["trace"])
                self.assertTrue(trace["summary"]["verified"])
                self.assertTrue(trace["summary"]["models_identical"])
                losses = [r["loss"] for r in trace["rounds"]]
                self.assertLess(losses[-1], losses[0])

    def test_rabenseifner_halves_are_verified(self):
        trace = json.loads(run({"layers": layers(4194304), "bucket": "4MiB", "sharding": "zero3"},
                               collective={"algorithm": "rabenseifner"})["trace"])
        self.assertTrue(trace["summary"]["verified"])

    def test_refusals(self):
        for training, extra, fragment in [
                ({"layers": layers(4194304), "sharding": "zero2", "overlap": "forward"}, {},
                 "training.overlap: \"forward\" is for sharding none or zero3"),
                ({"layers": layers(4194304), "overlap": "sideways"}, {},
                 "training.overlap: unknown overlap 'sideways'"),
                ({"compute": "1ms", "overlap": "forward"}, {},
                 "training.overlap: overlap is between the layers' compute and the buckets"),
                ({"layers": layers(4194304), "sharding": "zero3"}, {"recovery": {"policy": "rebuild"}},
                 "recovery.policy: with training.sharding \"zero3\"")]:
            with self.subTest(fragment=fragment), self.assertRaises(AssertionError) as refused:
                collective = {"algorithm": "ring", "size": "1MiB"} if "compute" in training else None
                run(training, collective=collective, **extra)
            lines = str(refused.exception).strip().splitlines()
            self.assertEqual(lines[0], "exit 2, wrote []")
            self.assertTrue(lines[1].startswith("collsim: error: " + fragment), lines[1])


class ForwardOverlap(unittest.TestCase):
    """Without sharding, layer i's forward waits for the bucket holding its gradient. DDP
    fills buckets in backward order, so layer 0's bucket is the last on the stream: layer 0
    waits for the last bucket, as in "backward" mode, and every later layer's bucket ended
    before it. The hand recurrence: iteration = max(F + Bk, start_{k-1} + c_{k-1})."""

    def test_the_same_iteration_as_ddp(self):
        ring = lambda n: 2 * (P - 1) * (ALPHA + n / (P * B))  # noqa: E731
        for parameters, bucket in ((4194304, "4MiB"), (33554432, "16MiB")):
            with self.subTest(parameters=parameters):
                per_layer = parameters // COUNT * 4
                per_bucket = max(1, int(bucket[:-3]) * 2 ** 20 // per_layer)
                k = COUNT // per_bucket
                c = ring(parameters * 4 / k)
                ready = [(b + 1) * per_bucket * 16e-3 / COUNT for b in range(k)]
                end = 0.0
                for b in range(k):
                    end = max(8e-3 + ready[b], end) + c
                expected = max(24e-3, end)
                for overlap in ("backward", "forward"):
                    trace = json.loads(run({"layers": layers(parameters), "bucket": bucket, "overlap": overlap,
                                            "rounds": 2})["trace"])
                    self.assertTrue(trace["summary"]["verified"])
                    self.assertAlmostEqual(expected, trace["summary"]["iteration_time"], delta=expected * 1e-9)


class BucketOfEachMessage(unittest.TestCase):
    def test_every_message_names_its_bucket_inside_that_buckets_interval(self):
        for training in ({"layers": layers(4194304), "bucket": "4MiB"},
                         {"layers": layers(4194304), "bucket": "4MiB", "sharding": "zero3"}):
            with self.subTest(sharding=training.get("sharding")):
                trace = json.loads(run(training)["trace"])
                self.assertEqual(trace["messages_detail"], "full")
                comm = [a for a in trace["activities"] if a["lane"] == "comm"]
                for m in trace["messages"]:
                    # the sender was in that bucket's collective when the transfer started
                    sender = [a for a in comm if a["rank"] == m["src"] and a["bucket"] == m["bucket"]
                              and a["start"] - 1e-12 <= m["start"] <= a["end"] + 1e-12]
                    self.assertTrue(sender, m)

    def test_per_step_entries_keep_the_buckets_apart(self):
        trace = json.loads(run({"layers": layers(4194304), "bucket": "4MiB"}, outputs=("trace",))["trace"])
        full = trace["messages"]
        steps = {}
        for m in full:
            key = (m["round"], m["epoch"], m["phase"], m["step"], m["bucket"])
            steps[key] = steps.get(key, 0) + 1
        # the same run with per-step messages
        per_step = json.loads(run({"layers": layers(4194304), "bucket": "4MiB"}, extra_args=("--messages", "none"))["trace"])
        self.assertEqual(per_step["messages_detail"], "per-step")
        self.assertEqual({(e["round"], e["epoch"], e["phase"], e["step"], e["bucket"]): e["count"]
                          for e in per_step["messages"]}, steps)


if __name__ == "__main__":
    unittest.main()
