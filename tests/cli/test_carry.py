"""The default carry at scale (plan/payload.hpp): every layer, bucket and chunk gets an
element, and the simulated times are those of a generous carry. Inception V3's first layers
are smaller than a bucket's chunks (its stem's first convolution has 928 parameters), which
used to leave a layer without an element.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -B -m unittest -v test_carry
"""
import unittest

from cli_common import traced_run

INCEPTION = ["--algorithm", "ring", "--channels", "4", "--set", "training.layers.preset=inception-v3",
             "--set", "training.layers.device_flops=100Tf", "--set", "training.batch=32", "--set", "training.bucket=25MiB",
             "--messages", "none"]
STEP = ("round", "epoch", "bucket", "phase", "step", "count", "bytes", "start", "end")


class DefaultCarry(unittest.TestCase):
    def test_inception_on_many_ranks_carries_every_chunk_and_times_as_a_generous_carry(self):
        for topology in ("nodes:4:8",):
            with self.subTest(topology=topology):
                default = traced_run("--topology", topology, *INCEPTION)
                carried = default["payload"]["carried_elements"]
                # generous: 4 times the default, at most every element
                generous = traced_run("--topology", topology, *INCEPTION, "--set",
                                      f"collective.carried_elements={4 * carried}")
                self.assertTrue(default["summary"]["verified"])
                self.assertEqual([], [n for n in default["notes"] if "no element" in n or "without an element" in n])
                for key in ("simulated_time", "collective_time", "comm_time", "iteration_time", "message_count"):
                    self.assertEqual(default["summary"][key], generous["summary"][key], key)
                self.assertEqual([[m.get(k) for k in STEP] for m in default["messages"]],
                                 [[m.get(k) for k in STEP] for m in generous["messages"]])
                # every bucket's 32 x 4 chunks hold an element: a bucket carries at least 128
                buckets = default["plan"]["training"]["buckets"]
                self.assertGreater(len(buckets), 1)
                for bucket in buckets:
                    self.assertGreaterEqual(bucket["carried_elements"], min(128, bucket["parameters"]), bucket)


if __name__ == "__main__":
    unittest.main()
