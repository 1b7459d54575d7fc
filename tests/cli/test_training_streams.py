"""training.streams: several bucket collectives in flight at once, sharing the network as
SimGrid shares it (max-min fairness). Checked against hand-computed shares on an ideal
2-rank star with latency 0, where every byte from rank 0 to rank 1 crosses host-0's up
link and host-1's down link (B each): a ring allreduce of n bytes on 2 ranks is one
exchange of n/2 each way, then another, n/B alone.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training_streams
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM
from test_training import TrainingRun

B = 10e9
STAR = "star:2:10GBps:0us"
F = 1e-3        # forward of the first layer
READY = 2e-3    # forward, then 1 ms of backward: every bucket is ready at once


def layers(*parameters):
    """One bucket per layer (a 4-byte cap), each ready at READY: the last layer's backward
    takes 1 ms, the others' none."""
    count = len(parameters)
    return [{"name": f"l{i}", "parameters": n, "forward": "1ms" if i == 0 else "0s",
             "backward": "1ms" if i == count - 1 else "0s"} for i, n in enumerate(parameters)]


class Streams(TrainingRun):
    def run_streams(self, parameters, streams=None, **extra):
        training = {"layers": layers(*parameters), "bucket": "4B", **extra}
        if streams is not None:
            training["streams"] = streams
        return self.run_training(training, workers=2, topology=STAR)

    def comm_intervals(self, trace, rank=0, round_=0):
        comm = [a for a in trace["activities"] if a["lane"] == "comm" and a["rank"] == rank and a["round"] == round_]
        return {a["bucket"]: (a["start"], a["end"]) for a in comm}

    def test_two_collectives_on_one_link_take_half_of_it_each(self):
        # Buckets in backward order: bucket 0 is the last layer (4 MB), bucket 1 the first
        # (12 MB). Both start at READY; each exchange of bucket 0 (2 MB) shares the link with
        # bucket 1's first exchange (6 MB) at B/2: bucket 0 ends after 2 x 2 MB / (B/2) =
        # 2 n0 / B, when bucket 1 has moved 4 of its 6 MB; alone at B it ends its first
        # exchange, then its second: (n0 + n1) / B in all, the link never idle.
        n0, n1 = 4e6, 12e6
        trace = self.run_streams([3_000_000, 1_000_000], streams=2)
        s = trace["summary"]
        self.assertTrue(s["verified"])
        for rank in (0, 1):
            got = self.comm_intervals(trace, rank)
            self.assertClose(READY, got[0][0])
            self.assertClose(READY, got[1][0])
            self.assertClose(READY + 2 * n0 / B, got[0][1])
            self.assertClose(READY + (n0 + n1) / B, got[1][1])
        self.assertClose(READY + (n0 + n1) / B, s["iteration_time"])
        self.assertClose((n0 + n1) / B, s["comm_time"])  # in flight at once: counted once

    def test_the_model_line_compares_each_collectives_own_time(self):
        # The model prices each bucket alone: n0/B + n1/B. With 2 streams bucket 0 took 2 n0/B
        # and bucket 1 (n0 + n1)/B: added up, (3 n0 + n1)/B, 1.5 times the model here; the
        # time in flight, (n0 + n1)/B, is the collective time.
        n0, n1 = 4e6, 12e6
        scenario = {"name": "streams", "topology": STAR, "workers": 2, "collective": {"algorithm": "ring"},
                    "training": {"layers": layers(3_000_000, 1_000_000), "bucket": "4B", "streams": 2}}
        with tempfile.TemporaryDirectory(prefix="collsim-streams-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "run", str(path)], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        model = next(line for line in run.stdout.splitlines() if line.strip().startswith("model time"))
        ratio = float(model.split("/model = ")[1].rstrip(")"))
        self.assertAlmostEqual((3 * n0 + n1) / (n0 + n1), ratio, places=6)
        self.assertIn("with 2 streams", model)

    def test_one_stream_runs_them_one_after_the_other(self):
        n0, n1 = 4e6, 12e6
        trace = self.run_streams([3_000_000, 1_000_000], streams=1)
        got = self.comm_intervals(trace)
        self.assertClose(READY, got[0][0])
        self.assertClose(READY + n0 / B, got[0][1])
        self.assertClose(READY + n0 / B, got[1][0])
        self.assertClose(READY + (n0 + n1) / B, got[1][1])
        self.assertClose((n0 + n1) / B, trace["summary"]["comm_time"])
        default = self.run_streams([3_000_000, 1_000_000])
        for key in ("simulated_time", "iteration_time", "comm_time", "exposed_comm"):
            self.assertEqual(default["summary"][key], trace["summary"][key], key)  # to the last digit

    def test_a_third_collective_waits_for_a_free_stream(self):
        # Three equal buckets of n = 8 MB ready at once, two streams: buckets 0 and 1 share
        # the link (each 2 n / B), then bucket 2 runs alone (n / B).
        n = 8e6
        trace = self.run_streams([2_000_000] * 3, streams=2)
        for rank in (0, 1):
            got = self.comm_intervals(trace, rank)
            self.assertClose(READY + 2 * n / B, got[0][1])
            self.assertClose(READY + 2 * n / B, got[1][1])
            self.assertClose(READY + 2 * n / B, got[2][0])
            self.assertClose(READY + 3 * n / B, got[2][1])
        self.assertTrue(trace["summary"]["verified"])

    def test_as_many_streams_as_buckets_start_them_all(self):
        n = 8e6
        trace = self.run_streams([2_000_000] * 3, streams=3)
        got = self.comm_intervals(trace)
        for b in range(3):
            self.assertClose(READY, got[b][0])
            self.assertClose(READY + 3 * n / B, got[b][1])

    def test_streams_on_more_ranks_verify_and_repeat_exactly(self):
        # 4 ranks with latency, rounds, a trained model: every bucket verified, the model the
        # same on every rank, and the same times on a second run.
        training = {"layers": {"uniform": {"count": 8, "parameters": 4194304, "forward": "1ms", "backward": "200us"}},
                    "bucket": "4MiB", "streams": 3, "rounds": 2, "model": "linear-regression", "parameters": 64}
        first = self.run_training(training, collective={"algorithm": "ring", "op": "avg"})
        again = self.run_training(training, collective={"algorithm": "ring", "op": "avg"})
        self.assertTrue(first["summary"]["verified"])
        self.assertTrue(first["summary"]["models_identical"])
        self.assertEqual(first["summary"]["simulated_time"], again["summary"]["simulated_time"])
        one = self.run_training({**training, "streams": 1}, collective={"algorithm": "ring", "op": "avg"})
        self.assertEqual(one["summary"]["message_count"], first["summary"]["message_count"])
        # the latencies of concurrent rings overlap: never slower than one stream here
        self.assertLessEqual(first["summary"]["iteration_time"], one["summary"]["iteration_time"])

    def test_a_server_process_serves_every_stream_at_once(self):
        # Once a hang: server processes (placement shared or dedicated) served one bucket at a
        # time on the untagged stream, so the ranks' second stream waited for them forever.
        # 2 workers and 1 dedicated server (host 2) on an ideal star, both buckets ready at
        # READY. Push: the 4 flows into the server's down link take B/4 each; bucket 0's (n0
        # each) end at 4 n0/B, bucket 1's then go on at B/2: 2(n1 - n0)/B more. Pull (the
        # server's up link, another link): bucket 0's 2 flows at B/2 end 2 n0/B after its
        # push; bucket 1's start after bucket 0's pull ended (n1 >= 2 n0) and take 2 n1/B.
        n0, n1 = 4e6, 12e6
        server = {"algorithm": "parameter-server",
                  "parameter_server": {"placement": "dedicated", "ratio": 0.5, "cpu_per_message": "0s"}}
        training = {"layers": layers(3_000_000, 1_000_000), "bucket": "4B", "streams": 2,
                    "launch": {"per_collective": "0s", "per_tensor": "0s"}}
        trace = self.run_training(training, workers=2, topology="star:3:10GBps:0us", collective=server)
        self.assertTrue(trace["summary"]["verified"], trace["summary"])
        for rank in (0, 1):
            got = self.comm_intervals(trace, rank)
            self.assertClose(READY + 6 * n0 / B, got[0][1])
            self.assertClose(READY + (2 * n0 + 4 * n1) / B, got[1][1])
        # one stream: the buckets one after the other, 4 n/B each
        one = self.run_training({**training, "streams": 1}, workers=2, topology="star:3:10GBps:0us", collective=server)
        self.assertClose(READY + 4 * (n0 + n1) / B, one["summary"]["iteration_time"])

    def test_zero2_reduce_scatters_at_once_then_all_gathers(self):
        trace = self.run_streams([3_000_000, 1_000_000], streams=2, sharding="zero2")
        self.assertTrue(trace["summary"]["verified"])
        comm = [a for a in trace["activities"] if a["lane"] == "comm" and a["rank"] == 0]
        scatters = [a for a in comm if a["what"] == "reduce-scatter"]
        gathers = [a for a in comm if a["what"] == "allgather"]
        self.assertEqual((len(scatters), len(gathers)), (2, 2))
        self.assertLessEqual(max(a["end"] for a in scatters), min(a["start"] for a in gathers))


class BadStreams(unittest.TestCase):
    def assert_refused(self, training, fragment, recovery=None):
        scenario = {"topology": "star:4", "workers": 4, "collective": {"algorithm": "ring"}, "training": training}
        if recovery is not None:
            scenario["recovery"] = recovery
        with tempfile.TemporaryDirectory(prefix="collsim-streams-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "validate", str(path)], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 2, run.stderr)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), run.stderr)
        self.assertIn(fragment, lines[0])

    LAYERS = {"uniform": {"count": 4, "parameters": 4096, "backward": "1ms"}}

    def test_zero_streams(self):
        self.assert_refused({"layers": self.LAYERS, "streams": 0}, "training.streams: 0 is out of range")

    def test_streams_without_layers(self):
        self.assert_refused({"compute": "1ms", "streams": 2}, "training.streams: streams run the collectives")

    def test_streams_with_zero3(self):
        self.assert_refused({"layers": self.LAYERS, "sharding": "zero3", "streams": 2}, "training.streams: zero3")

    def test_streams_with_rebuild(self):
        self.assert_refused({"layers": self.LAYERS, "streams": 2}, "recovery.policy: \"rebuild\" watches",
                            recovery={"policy": "rebuild"})


if __name__ == "__main__":
    unittest.main()
