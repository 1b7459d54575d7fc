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
        collective = {"algorithm": "parameter-server", "size": "4MB", "parameter_server": deployment}
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


if __name__ == "__main__":
    unittest.main()
