"""Asynchronous and bounded-staleness parameter servers (collective.parameter_server.mode),
checked against hand-worked timelines on an ideal star without latency: 2 workers on host-0
and host-1, one dedicated server on host-2, every host its own link of B = 10 GB/s. A push or
a pull of the whole n = 4 MB alone takes T = n / B = 0.4 ms; two pulls out of the server at
once share its link and take 2T. Worker 0 computes C = 4 ms per iteration, worker 1 (a
slow-host fault at factor 0.5 from round 0) 2C = 8 ms.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training_async
"""
import unittest

from test_training import TrainingRun

T = 4e6 / 10e9
C = 4e-3
SLOW = [{"kind": "slow-host", "host": "host-1", "factor": 0.5, "at_round": 0}]


def fields(update):
    return (update["server"], update["worker"], update["round"], update["version"], update["read_version"],
            update["staleness"], update["reply_version"])


class AsyncServers(TrainingRun):
    def run_ps(self, mode=None, staleness=None, rounds=2, training=None, **top):
        deployment = {"placement": "dedicated"}
        if mode is not None:
            deployment["mode"] = mode
        if staleness is not None:
            deployment["staleness"] = staleness
        collective = {"algorithm": "parameter-server", "parameter_server": deployment}
        if not (training or {}).get("layers"):
            collective["size"] = "4MB"
        return self.run_training(training or {"rounds": rounds, "compute": "4ms"}, workers=2, collective=collective,
                                 topology="star:3:10GBps:0us", faults=SLOW, **top)

    def check_updates(self, trace, want):
        """`want`: (worker, round, version, read_version, staleness, reply_version, applied at)."""
        got = trace["updates"]
        self.assertEqual([(0, *w[:6]) for w in want], [fields(u) for u in got])
        for expected, update in zip(want, got):
            self.assertClose(expected[6], update["time"])

    def test_asynchronous_two_workers_by_hand(self):
        # w0: computes [0, C], pushes [C, C+T] (applied: version 0), pulled [C+T, C+2T];
        #     computes [C+2T, 2C+2T], pushes (version 2: w1's push came in between, and the
        #     model it read held none of w1's iterations: staleness 1), pulled by 2C+4T.
        # w1: computes [0, 2C], pushes [2C, 2C+T] (version 1), pulled [2C+T, 2C+2T];
        #     computes [2C+2T, 4C+2T] on a model holding both workers' round 0 (staleness 0),
        #     pushes (version 3), pulled by 4C+4T.
        trace = self.run_ps("asynchronous")
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.check_updates(trace, [(0, 0, 0, 0, 0, 1, C + T),
                                   (1, 0, 1, 0, 0, 2, 2 * C + T),
                                   (0, 1, 2, 1, 1, 3, 2 * C + 3 * T),
                                   (1, 1, 3, 2, 0, 4, 4 * C + 3 * T)])
        self.assertClose(4 * C + 4 * T, s["simulated_time"])
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["parameter_server"]["mode"], "asynchronous")

    def test_bounded_staleness_holds_the_fast_worker_back(self):
        # s = 1, 3 rounds. A pull after round c is answered once every worker pushed round c - 1.
        # w0's rounds 0 and 1 are answered at once (w1 pushed round 0 at 2C+T, before w0's
        # round 1 arrives at 2C+3T); its round 2 (pushed at 3C+5T) waits for w1's round 1
        # (pushed at 4C+3T, after computing [2C+2T, 4C+2T]): both pulls then leave the server
        # together, 2T. w1's round 2 computes [4C+5T, 6C+5T] and is answered at once.
        trace = self.run_ps("bounded", staleness=1, rounds=3)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.check_updates(trace, [(0, 0, 0, 0, 0, 1, C + T),
                                   (1, 0, 1, 0, 0, 2, 2 * C + T),
                                   (0, 1, 2, 1, 1, 3, 2 * C + 3 * T),
                                   (0, 2, 3, 3, 1, 5, 3 * C + 5 * T),
                                   (1, 1, 4, 2, 0, 5, 4 * C + 3 * T),
                                   (1, 2, 5, 5, 0, 6, 6 * C + 6 * T)])
        self.assertClose(6 * C + 7 * T, s["simulated_time"])
        self.assertLessEqual(max(u["staleness"] for u in trace["updates"]), 1)
        asynchronous = self.run_ps("asynchronous", rounds=3)
        # unbounded, w0's round 2 is answered at once (after 4 pushes), done by 3C + 6T
        w0_last = [u for u in asynchronous["updates"] if u["worker"] == 0][-1]
        self.assertClose(3 * C + 5 * T, w0_last["time"])
        self.assertEqual((3, 1, 4), (w0_last["read_version"], w0_last["staleness"], w0_last["reply_version"]))

    def test_staleness_zero_is_synchronous_to_the_last_digit(self):
        # Synchronous: both pushes must arrive (w1's at 2C+T) before both pulls (2T):
        # round 0 ends at 2C+3T, round 1 at 2C+3T + 2C+T + 2T.
        for training in ({"rounds": 3, "compute": "4ms"},
                         {"rounds": 2, "compute": "4ms", "model": "linear-regression", "parameters": 64,
                          "gradient_size": "4MB"}):
            synchronous = self.run_ps(training=training)
            bounded = self.run_ps("bounded", staleness=0, training=training)
            self.assertTrue(bounded["summary"]["verified"], bounded["summary"])
            for key in ("simulated_time", "collective_time"):
                self.assertEqual(synchronous["summary"][key], bounded["summary"][key], key)
            self.assertEqual([r["end"] for r in synchronous["rounds"]], [r["end"] for r in bounded["rounds"]])
            self.assertEqual({0}, {u["staleness"] for u in bounded["updates"]})
        self.assertClose(2 * (2 * C + 3 * T), synchronous["summary"]["simulated_time"])

    def test_a_model_trains_and_is_verified_by_replay(self):
        training = {"rounds": 6, "compute": "4ms", "model": "linear-regression", "parameters": 256,
                    "learning_rate": 0.05}
        trace = self.run_ps("asynchronous", training=training)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertEqual(12, len(trace["updates"]))
        losses = [r["loss"] for r in trace["rounds"] if "loss" in r]
        self.assertTrue(losses and losses[-1] < losses[0], losses)


# Buckets: two layers, one bucket each (a 4-byte cap). Layer 0: 2,000,000 parameters (8 MB,
# a push or pull alone takes T0 = 0.8 ms), forward 10 ms, backward 10 ms; layer 1: 1,000,000
# (4 MB, T1 = 0.4 ms), forward 0, backward 10 ms. Bucket 0 (layer 1) is ready 10 ms into
# backward, bucket 1 (layer 0) at its end, 20 ms. Worker 1 computes at half speed.
T0, T1 = 8e6 / 10e9, 4e6 / 10e9
MS = 1e-3
LAYERS = [{"name": "l0", "parameters": 2_000_000, "forward": "10ms", "backward": "10ms"},
          {"name": "l1", "parameters": 1_000_000, "forward": "0s", "backward": "10ms"}]


class AsyncBuckets(AsyncServers):
    def run_buckets(self, mode=None, staleness=None, rounds=2, **extra):
        training = {"rounds": rounds, "layers": LAYERS, "bucket": "4B", **extra}
        return self.run_ps(mode, staleness, training=training)

    def test_each_bucket_is_pushed_as_backward_makes_it(self):
        # w0: forward [0, 10]; bucket 0 pushed at 20, applied at 20 + T1 (v0), pulled at once;
        #     bucket 1 pushed at 30, applied at 30 + T0 (v1), pulled by 30 + 2 T0: round 0 ends.
        #     Round 1 from 30 + 2 T0: bucket 0 applied at 50 + 2 T0 + T1 (v3), bucket 1 at 60 + 3 T0 (v5).
        # w1 (half speed): forward [0, 20]; bucket 0 applied at 40 + T1 (v2), bucket 1 at 60 + T0
        #     (v4), pulled by 60 + 2 T0; round 1 from there: 100 + 2 T0 + T1 (v6), 120 + 3 T0 (v7).
        # Every bucket's staleness is its own: w0's round 1 read each bucket when w1 had pushed
        # none of it (1); w1's round 1 read each after w0's round 0 of it (0). No two transfers
        # into or out of the server overlap.
        trace = self.run_buckets("asynchronous")
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        got = [(u["worker"], u["round"], u["bucket"], u["version"], u["read_version"], u["staleness"],
                u["reply_version"]) for u in trace["updates"]]
        self.assertEqual([(0, 0, 0, 0, 0, 0, 1), (0, 0, 1, 1, 0, 0, 2), (1, 0, 0, 2, 0, 0, 3),
                          (0, 1, 0, 3, 1, 1, 4), (1, 0, 1, 4, 0, 0, 5), (0, 1, 1, 5, 2, 1, 6),
                          (1, 1, 0, 6, 3, 0, 7), (1, 1, 1, 7, 5, 0, 8)], got)
        times = [20 * MS + T1, 30 * MS + T0, 40 * MS + T1, 50 * MS + 2 * T0 + T1, 60 * MS + T0,
                 60 * MS + 3 * T0, 100 * MS + 2 * T0 + T1, 120 * MS + 3 * T0]
        for want, update in zip(times, trace["updates"]):
            self.assertClose(want, update["time"])
        self.assertClose(120 * MS + 4 * T0, s["simulated_time"])
        comm = [a for a in trace["activities"] if a["lane"] == "comm" and a["rank"] == 0 and a["round"] == 0]
        self.assertEqual(2, len(comm))
        for (start, end), a in zip([(20 * MS, 20 * MS + 2 * T1), (30 * MS, 30 * MS + 2 * T0)], comm):
            self.assertClose(start, a["start"])
            self.assertClose(end, a["end"])

    def test_bounded_staleness_per_bucket(self):
        # s = 0: each bucket's pull waits for the other worker's push of that bucket and round:
        # w0's bucket 0 of round 0 is answered when w1's arrives (40 + T1), both pulls leaving
        # together (2 T1); bucket 1 at 60 + T0, then 2 T0: round 0 ends at 60 + 3 T0 for both.
        trace = self.run_buckets("bounded", staleness=0, rounds=1)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertEqual({0}, {u["staleness"] for u in trace["updates"]})
        self.assertClose(60 * MS + 3 * T0, s["simulated_time"])
        synchronous = self.run_buckets(rounds=1)
        self.assertClose(synchronous["summary"]["simulated_time"], s["simulated_time"])

    def test_streams_and_a_model(self):
        extra = {"model": "linear-regression", "parameters": 64, "learning_rate": 0.05}
        for streams in (1, 2):
            trace = self.run_buckets("asynchronous", rounds=4, streams=streams, **extra)
            self.assertTrue(trace["summary"]["verified"], trace["summary"])
            self.assertEqual(2 * 2 * 4, len(trace["updates"]))


# Local aggregation: 4 workers on the first two nodes of nodes:3:2, every link 10 GB/s without
# latency, one dedicated server on node 2. Each node's second rank sends its gradient to the
# first (T, inside the node), which adds them up, pushes (T, through both NICs), pulls (T)
# and hands the result back (T). Rank 3 computes at half speed, so node 1 (ranks 2, 3) pushes
# at 2C + 2T; node 0 at C + 2T.
class AsyncNodes(AsyncServers):
    def run_nodes(self, mode=None, staleness=None, training=None):
        deployment = {"placement": "dedicated", "hosts": ["node-2-dev-0"], "local_aggregation": True}
        if mode is not None:
            deployment["mode"] = mode
        if staleness is not None:
            deployment["staleness"] = staleness
        collective = {"algorithm": "parameter-server", "size": "4MB", "parameter_server": deployment}
        slow = [{"kind": "slow-host", "host": "node-1-dev-1", "factor": 0.5, "at_round": 0}]
        return self.run_training(training or {"rounds": 2, "compute": "4ms"}, workers=4, collective=collective,
                                 topology="nodes:3:2:10GBps:10GBps:0us:0us", faults=slow)

    def test_nodes_push_their_sums_asynchronously(self):
        # node 0: pushes applied at C + 2T (v0) and, its round 1 starting at C + 4T, 2C + 6T
        # (v2: it read v1's model, without node 1's round 0: staleness 1); node 1: 2C + 2T (v1)
        # and, from 2C + 4T, 4C + 6T (v3, on a model holding both rounds 0: staleness 0).
        trace = self.run_nodes("asynchronous")
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertEqual([(0, 0, 0, 0, 0, 1), (2, 0, 1, 0, 0, 2), (0, 1, 2, 1, 1, 3), (2, 1, 3, 2, 0, 4)],
                         [fields(u)[1:] for u in trace["updates"]])
        for want, update in zip([C + 2 * T, 2 * C + 2 * T, 2 * C + 6 * T, 4 * C + 6 * T], trace["updates"]):
            self.assertClose(want, update["time"])
        self.assertClose(4 * C + 8 * T, s["simulated_time"])

    def test_staleness_zero_is_the_synchronous_local_aggregation(self):
        # Round 0: both pushes in by 2C + 2T, both pulls out together (2T), handed back (T);
        # round 1 from 2C + 5T: node 1's push at 4C + 7T, then 2T and T: 4C + 10T.
        bounded = self.run_nodes("bounded", staleness=0)
        synchronous = self.run_nodes()
        self.assertTrue(bounded["summary"]["verified"], bounded["summary"])
        self.assertClose(4 * C + 10 * T, synchronous["summary"]["simulated_time"])
        self.assertEqual(synchronous["summary"]["simulated_time"], bounded["summary"]["simulated_time"])

    def test_a_model_trained_by_nodes_is_verified_by_replay(self):
        training = {"rounds": 5, "compute": "4ms", "model": "linear-regression", "parameters": 128,
                    "learning_rate": 0.05}
        trace = self.run_nodes("asynchronous", training=training)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertEqual({0, 2}, {u["worker"] for u in trace["updates"]})
        losses = [r["loss"] for r in trace["rounds"] if "loss" in r]
        self.assertTrue(losses and losses[-1] < losses[0], losses)


if __name__ == "__main__":
    unittest.main()
