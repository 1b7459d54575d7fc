"""The plan (docs/trace-format.md#plan): `collsim validate --plan` prints what a run will do
before it runs, and the trace records the same plan. Every figure is worked out here from
the scenario and the platform (star:N: two 1 us links of 10 GB/s per route), never read
from an earlier run.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_plan -v   (from tests/cli)
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
MiB = 1 << 20
ALPHA, B = 2e-6, 10e9


def collsim(*args, expect=0):
    done = subprocess.run([COLLSIM, *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    if done.returncode != expect:
        raise AssertionError(f"collsim {' '.join(args)}: exit {done.returncode}, wanted {expect}: {done.stderr}")
    return done


def plan_of(*args):
    return json.loads(collsim("validate", *args, "--plan").stdout)


class ValidatePlan(unittest.TestCase):
    def test_a_named_ring_on_a_star(self):
        plan = plan_of("--workers", "8", "--size", "64MiB", "--topology", "star:8")
        # each host's split-duplex link counts twice (_UP, _DOWN), and SimGrid's loopback once
        self.assertEqual(plan["platform"], {"topology": "star:8", "kind": "generator", "hosts": 8, "links": 2 * 8 + 1,
                                            "network": "ideal"})
        self.assertEqual(plan["placement"]["rank_hosts"], [f"host-{r}" for r in range(8)])
        self.assertEqual(plan["placement"]["by"], "platform order")
        algorithm = plan["algorithm"]
        self.assertEqual((algorithm["name"], algorithm["asked"], algorithm["chosen_by"]), ("ring", "ring", "scenario"))
        self.assertEqual(algorithm["parameters"], {"channels": 1})
        self.assertEqual(algorithm["candidates"], [])
        # 64 MiB of float32: 16 Mi elements; the carried budget is 2^20 elements over 8 ranks.
        self.assertEqual(plan["payload"]["logical_elements"], 16 * MiB)
        self.assertEqual(plan["payload"]["carried_elements"], (1 << 20) // 8)
        n, p = 64 * MiB, 8
        model = plan["model"]
        self.assertAlmostEqual(model["alpha"] / ALPHA, 1, delta=1e-12)
        self.assertAlmostEqual(model["bandwidth"] / B, 1, delta=1e-12)
        self.assertAlmostEqual(model["time"] / (2 * (p - 1) * (ALPHA + n / p / B)), 1, delta=1e-9)
        # no algorithm moves less than 2(p-1)/p n through a rank's link (it outweighs log2(p) alpha here)
        self.assertAlmostEqual(model["lower_bound"] / (2 * (p - 1) / p * n / B), 1, delta=1e-9)
        self.assertEqual(plan["faults"], [])
        self.assertEqual(plan["limits"]["hosts"], 8)
        self.assertEqual(plan["limits"]["messages"], 2 * (p - 1) * p)  # one round of the ring

    def test_auto_says_what_it_weighed_and_why(self):
        plan = plan_of("--workers", "8", "--size", "4B", "--topology", "star:8", "--algorithm", "auto")
        algorithm = plan["algorithm"]
        self.assertEqual(algorithm["asked"], "auto")
        self.assertEqual(algorithm["chosen_by"], "model")
        names = [c["algorithm"] for c in algorithm["candidates"]]
        self.assertEqual(algorithm["name"], names[0])
        self.assertIn("ring", names)
        self.assertTrue(algorithm["reason"].startswith(f"auto chose {names[0]} by model"), algorithm["reason"])
        times = [c["model_time"] for c in algorithm["candidates"] if "model_time" in c]
        self.assertEqual(times, sorted(times))

    def test_faults_are_resolved_to_hosts_links_and_ranks(self):
        plan = plan_of("scenarios/faults/slow-link-3-rebuild.json")
        [fault] = plan["faults"]
        # the scenario names host-2's NIC: its two halves, striking rank 2
        self.assertEqual(fault["host"], "host-2")
        self.assertEqual(sorted(fault["links"]), ["host-2_link_DOWN", "host-2_link_UP"])
        self.assertEqual(fault["ranks"], [2])
        self.assertEqual(plan["recovery"], "rebuild")
        # a host that no fault preempts and, on star:3, every host runs a worker: the first
        self.assertEqual(plan["placement"]["control_host"], "host-0")

    def test_bad_input_is_refused_as_a_run_refuses_it(self):
        done = collsim("validate", "--workers", "8", "--topology", "star:4", "--plan", expect=2)
        self.assertEqual(done.stdout, "")
        self.assertEqual(done.stderr.count("\n"), 1)
        self.assertIn("workers: 8 workers but 'star:4' has only 4 hosts", done.stderr)


class TracedPlan(unittest.TestCase):
    def test_the_trace_records_the_plan_validate_prints(self):
        for scenario in ["scenarios/quickstart.json", "scenarios/faults/preempt-8-rebuild.json",
                         "scenarios/training/zero3-300m-16gpu.json"]:
            with self.subTest(scenario=scenario), tempfile.TemporaryDirectory() as folder:
                trace = Path(folder) / "t.json"
                collsim("run", scenario, "--quiet", "--trace", str(trace))
                self.assertEqual(json.loads(trace.read_text())["plan"], plan_of(scenario))

    def test_a_layered_plan_lists_its_buckets(self):
        plan = plan_of("scenarios/training/zero3-300m-16gpu.json")
        training = plan["training"]
        self.assertEqual(training["sharding"], "zero3")
        self.assertEqual(training["halves"], ["ring", "ring"])
        buckets = training["buckets"]
        self.assertGreater(len(buckets), 1)
        # the buckets cover the carried elements once, in backward order (the last layers first)
        self.assertEqual(sum(b["carried_elements"] for b in buckets), plan["payload"]["carried_elements"])
        self.assertGreater(buckets[0]["first_layer"], buckets[-1]["first_layer"])


if __name__ == "__main__":
    unittest.main()
