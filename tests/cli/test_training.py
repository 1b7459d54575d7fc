"""Training iterations with layers and gradient buckets (DDP-style overlap): every figure is
checked against the hand recurrence of docs/training.md on an ideal star, where one ring
allreduce of n bytes takes 2(p-1)(alpha + n/(pB)) exactly.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM, REPO

ALPHA, B = 2e-6, 10e9  # star:P: two 1 us links of 10 GB/s between any two ranks
P = 4


def ring(n_bytes, p=P):
    return 2 * (p - 1) * (ALPHA + n_bytes / (p * B))


class TrainingRun(unittest.TestCase):
    def run_training(self, training, workers=P, collective=None, expect=0, topology=None, **top):
        """`top`: more top-level scenario keys (seed, ...)."""
        scenario = {"name": "training", "topology": topology or f"star:{workers}", "workers": workers,
                    "collective": collective or {"algorithm": "ring"}, "training": training, **top}
        with tempfile.TemporaryDirectory(prefix="collsim-training-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            trace = Path(folder) / "t.json"
            run = subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, expect, run.stderr)
            if expect != 0:
                self.assertFalse(trace.exists())
                return run
            return json.loads(trace.read_text())

    def assertClose(self, expected, actual, rel=1e-9):
        self.assertAlmostEqual(expected, actual, delta=abs(expected) * rel + 1e-15)


class Overlap(TrainingRun):
    # 8 layers of 524288 parameters (2 MiB of float32 each): 16 MiB of gradients
    LAYERS = {"uniform": {"count": 8, "parameters": 4194304, "forward": "8ms", "backward": "16ms"}}
    N = 4194304 * 4
    FORWARD, BACKWARD = 8e-3, 16e-3

    def test_one_bucket_is_compute_then_one_allreduce(self):
        s = self.run_training({"layers": self.LAYERS})["summary"]
        self.assertEqual(s["buckets"], 1)
        self.assertClose(self.FORWARD + self.BACKWARD + ring(self.N), s["iteration_time"])
        self.assertClose(ring(self.N), s["exposed_comm"])
        self.assertClose(ring(self.N), s["comm_time"])
        self.assertEqual(s["overlap_fraction"], 0)

    def test_buckets_shorter_than_backward_expose_the_last_one(self):
        # 4 MiB buckets: two layers each, ready every 4 ms of backward; each allreduce takes
        # 0.64 ms, so each is done before the next is ready and only the last one shows.
        trace = self.run_training({"layers": self.LAYERS, "bucket": "4MiB", "rounds": 2})
        s = trace["summary"]
        self.assertEqual(s["buckets"], 4)
        bucket = ring(self.N / 4)
        self.assertLess(bucket, self.BACKWARD / 4)
        self.assertClose(self.FORWARD + self.BACKWARD + bucket, s["iteration_time"])
        self.assertClose(bucket, s["exposed_comm"])
        self.assertClose(4 * bucket, s["comm_time"])
        self.assertClose(3 / 4, s["overlap_fraction"])
        self.assertClose(self.FORWARD + self.BACKWARD, s["compute_time"])
        for r in trace["rounds"]:
            self.assertClose(bucket, r["exposed_comm"])
            self.assertClose(self.FORWARD + self.BACKWARD + bucket, r["end"] - r["start"])

    def test_buckets_longer_than_backward_queue_on_the_stream(self):
        # Backward of 0.2 ms: the first bucket is ready after 50 us, and from then on the
        # stream is busy: iteration = forward + first ready + 4 allreduces, back to back.
        layers = {"uniform": {"count": 8, "parameters": 4194304, "forward": "1ms", "backward": "200us"}}
        s = self.run_training({"layers": layers, "bucket": "4MiB"})["summary"]
        bucket = ring(self.N / 4)
        self.assertClose(1e-3 + 200e-6 / 4 + 4 * bucket, s["iteration_time"])
        self.assertClose(1e-3 + 200e-6 / 4 + 4 * bucket - 1.2e-3, s["exposed_comm"])

    def test_a_bucket_closes_at_the_cap_and_never_splits_a_layer(self):
        # Backward order: c (1 MiB) is under the 4 MiB cap, so b (8 MiB) joins it whole and
        # closes the bucket at 9 MiB; a (2 MiB), the first layer, is the last bucket.
        mib = 262144  # float32 parameters in 1 MiB
        layers = [{"name": "a", "parameters": 2 * mib, "forward": "1ms", "backward": "1ms"},
                  {"name": "b", "parameters": 8 * mib, "forward": "1ms", "backward": "1ms"},
                  {"name": "c", "parameters": 1 * mib, "forward": "1ms", "backward": "1ms"}]
        s = self.run_training({"layers": layers, "bucket": "4MiB"},
                              collective={"algorithm": "ring", "carried_elements": 11 * mib})["summary"]
        self.assertEqual(s["buckets"], 2)
        # bucket {c, b} (9 MiB) is ready after 2 ms of backward, {a} (2 MiB) after 3 ms
        first_done = 3e-3 + 2e-3 + ring(9 * 4 * mib)
        end = max(first_done, 3e-3 + 3e-3) + ring(2 * 4 * mib)
        self.assertClose(end, s["iteration_time"])

    def test_inside_a_node_every_bucket_but_the_last_hides(self):
        # The ready scenario's model on one node of 8: 24 equal buckets (two 25 MB layers
        # each), each allreduced faster than backward makes the next: 23 of 24 hidden.
        scenario = json.loads((REPO / "scenarios" / "training" / "ddp-300m-16gpu.json").read_text())
        training = dict(scenario["training"], rounds=1)
        scenario_run = self.run_training(training, workers=8, collective=scenario["collective"],
                                         topology="nodes:1:8:10GBps:6GBps")["summary"]
        self.assertEqual(scenario_run["buckets"], 24)
        self.assertClose(23 / 24, scenario_run["overlap_fraction"], rel=1e-6)
        self.assertClose(scenario_run["comm_time"] / 24, scenario_run["exposed_comm"], rel=1e-6)

    def test_samples_per_second_from_the_batch(self):
        s = self.run_training({"layers": self.LAYERS, "bucket": "4MiB", "batch": 32})["summary"]
        self.assertClose(32 * P / s["iteration_time"], s["samples_per_second"])

    def test_a_batch_alone_gives_the_throughput_of_plain_rounds(self):
        s = self.run_training({"compute": "10ms", "batch": 16}, collective={"algorithm": "ring", "size": "1MiB"})["summary"]
        iteration = 10e-3 + ring(1024 * 1024)
        self.assertClose(iteration, s["iteration_time"])
        self.assertClose(16 * P / iteration, s["samples_per_second"])

    def test_a_trained_model_stays_identical_across_ranks(self):
        trace = self.run_training({"model": "linear-regression", "parameters": 64, "rounds": 3,
                                   "layers": {"uniform": {"count": 4, "parameters": 4096, "forward": "1ms",
                                                          "backward": "2ms"}}, "bucket": "4KiB"},
                                  collective={"algorithm": "ring"})
        self.assertTrue(trace["summary"]["verified"])
        self.assertTrue(trace["summary"]["models_identical"])
        self.assertEqual(trace["summary"]["buckets"], 4)


class Launch(TrainingRun):
    """training.launch: per collective and per tensor, on the stream before each collective."""
    LAYERS = Overlap.LAYERS
    N = Overlap.N
    C, T = 50e-6, 10e-6

    def test_plain_rounds_pay_one_collective_and_one_tensor(self):
        n = 4096 * 4
        trace = self.run_training({"compute": "1ms", "rounds": 2,
                                   "launch": {"per_collective": "50us", "per_tensor": "10us"}},
                                  collective={"algorithm": "ring", "size": n})
        s = trace["summary"]
        self.assertClose(ring(n) + self.C + self.T, s["collective_time"])
        self.assertClose(s["collective_time"], s["model_time"])
        self.assertClose(2 * (1e-3 + ring(n) + self.C + self.T), s["simulated_time"])

    def test_each_bucket_pays_its_launch_on_the_stream(self):
        # backward of 0.2 ms: the stream is busy from the first bucket on (as in Overlap), each of
        # the 4 buckets of 2 layers now c_b + C + 2 T
        layers = {"uniform": {"count": 8, "parameters": 4194304, "forward": "1ms", "backward": "200us"}}
        s = self.run_training({"layers": layers, "bucket": "4MiB",
                               "launch": {"per_collective": "50us", "per_tensor": "10us"}})["summary"]
        bucket = ring(self.N / 4) + self.C + 2 * self.T
        self.assertClose(1e-3 + 200e-6 / 4 + 4 * bucket, s["iteration_time"])
        self.assertClose(4 * bucket, s["comm_time"])
        self.assertClose(s["collective_time"], s["model_time"])

    def test_the_summary_states_the_framework_apart(self):
        run = subprocess.run([COLLSIM, "run", "--workers", "4", "--size", "4MiB", "--rounds", "2", "--set",
                              "training.compute=1ms", "--set", "training.launch.per_collective=50us", "--set",
                              "training.launch.per_tensor=10us"], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"(?m)^ +framework +60 us per iteration \(1 collective x 50 us \+ 1 tensor x 10 us\)")

    def test_bad_launch_is_one_line(self):
        for training, fragment in (({"compute": "1ms", "launch": "50us"}, "training.launch: must be an object"),
                                   ({"compute": "1ms", "launch": {"per_colective": "1us"}},
                                    "training.launch.per_colective: unknown key (did you mean 'per_collective'?)"),
                                   ({"compute": "1ms", "launch": {"per_tensor": "-1us"}}, "training.launch.per_tensor:"),
                                   ({"layers": self.LAYERS, "sharding": "zero2", "launch": {"per_tensor": "1us"}},
                                    "training.launch: not with training.sharding yet")):
            with self.subTest(training=training):
                run = self.run_training(training, expect=2)
                lines = run.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, run.stderr)
                self.assertIn(fragment, lines[0])


class BadLayers(TrainingRun):
    def assert_refused(self, training, fragment, collective=None):
        run = self.run_training(training, collective=collective, expect=2)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), run.stderr)
        self.assertIn(fragment, lines[0])

    def test_layers_and_compute(self):
        self.assert_refused({"compute": "1ms", "layers": [{"parameters": 4}]}, "training.compute:")

    def test_a_bucket_without_layers(self):
        self.assert_refused({"compute": "1ms", "bucket": "1MiB"}, "training.bucket:")

    def test_a_size_that_disagrees_with_the_layers(self):
        self.assert_refused({"layers": [{"parameters": 4}]}, "collective.size:",
                            collective={"algorithm": "ring", "size": "1MiB"})

    def test_more_buckets_than_carried_elements_run_as_if_all_were_carried(self):
        # It was refused ("raise it to at least 8"): a bucket that carries no element is still
        # simulated in full (its messages weigh its logical elements); a note says its data
        # goes unverified.
        training = {"layers": {"uniform": {"count": 8, "parameters": 800, "backward": "1ms"}}, "bucket": "4B"}
        few = self.run_training(training, collective={"algorithm": "ring", "carried_elements": 4})
        every = self.run_training(training, collective={"algorithm": "ring", "carried_elements": 800})
        self.assertEqual(few["summary"]["simulated_time"], every["summary"]["simulated_time"])
        self.assertEqual(few["summary"]["message_count"], every["summary"]["message_count"])
        # 8 buckets of 100 parameters, each one ring of 2(p-1) steps of 25 elements
        self.assertEqual(8 * 2 * (P - 1) * P, few["summary"]["message_count"])
        self.assertTrue(any("carried_elements 4: 8 of the 8 buckets leave" in note and "not verified" in note
                            for note in few["notes"]), few["notes"])

    def test_a_layer_without_parameters(self):
        self.assert_refused({"layers": [{"name": "x", "forward": "1ms"}]}, "training.layers.0.parameters")

    def test_a_negative_backward(self):
        self.assert_refused({"layers": [{"parameters": 4, "backward": "-1ms"}]}, "training.layers.0")


if __name__ == "__main__":
    unittest.main()
