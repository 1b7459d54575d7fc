"""The parallelism block as a user meets it (docs/parallelism.md): bad input is one line and
exit 2 with nothing written, a run of communicators and a transformer's step print their
figures, and --perfetto draws one lane per communicator per rank.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_parallelism
"""
import json
import re
import subprocess
import tempfile
import unittest
import xml.dom.minidom
from pathlib import Path

import jsonschema

from cli_common import COLLSIM

STEP = {"topology": "star:8",
        "parallelism": {"tensor": 2, "pipeline": 2, "data": 2,
                        "step": {"model": "tiny", "layers": 4, "global_batch": 8, "efficiency": 0.5}}}


class Parallelism(unittest.TestCase):
    def run_scenario(self, scenario, *flags):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "run", str(path), *flags], capture_output=True, text=True, timeout=300)
            return run, folder

    def refused(self, scenario, message, *flags):
        """Exit 2, one line naming the field, and no output file written."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "run", str(path), *flags], capture_output=True, text=True, timeout=60,
                                 cwd=folder)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertEqual(run.stderr.count("\n"), 1, run.stderr)
            self.assertIn(message, run.stderr)
            self.assertEqual(sorted(p.name for p in Path(folder).iterdir()), ["s.json"])

    def test_bad_input_is_one_line(self):
        base = {"parallelism": {"data": 2, "collectives": [{"group": "data", "size": "1MiB"}]}}
        self.refused({"parallelism": {"data": 6, "expert": 4, "collectives": [{"group": "data"}]}},
                     "collsim: error: parallelism.expert: 4 does not divide parallelism.data 6")
        self.refused({**base, "workers": 3}, "collsim: error: workers: 3 given, but parallelism makes")
        self.refused({"parallelism": {"data": 2, "collectives": [{"group": "tensr"}]}},
                     "parallelism.collectives.0.group: unknown dimension 'tensr' (did you mean 'tensor'?)")
        self.refused({"parallelism": {"data": 2, "collectives": [{"group": "data", "algorithm": "nccl"}]}},
                     "parallelism.collectives.0.algorithm: NCCL's algorithms run on GPUs")
        self.refused({**base, "collective": {"kind": "allreduce"}}, "collective: with parallelism each collective")
        self.refused({**base, "recovery": {"policy": "rebuild"}},
                     "recovery: with parallelism, faults and recovery are a training step's")
        self.refused({"parallelism": {"tensor": 3, "step": {"model": "tiny", "efficiency": 0.5}}},
                     "parallelism.tensor: 3 does not divide the model's 8 heads")
        self.refused({"parallelism": {"tensor": 4, "step": {"model": "tiny", "kv_heads": 2, "efficiency": 0.5}}},
                     "parallelism.tensor: 4 does not divide the model's 2 key/value heads")
        self.refused({"parallelism": {"data": 2, "step": {"model": "tinny", "efficiency": 0.5}}},
                     "parallelism.step.model: unknown")
        self.refused({**STEP, "faults": [{"kind": "preempt", "rank": 1, "at": "0s", "return_after": "1s"}],
                      "recovery": {"policy": "rebuild"}}, "faults.0.return_after: a returning worker rejoins at a round")
        def chunks(v, **step):
            return {**STEP, "parallelism": {**STEP["parallelism"],
                                            "step": {**STEP["parallelism"]["step"], "virtual_stages": v, **step}}}
        self.refused(chunks(3), "parallelism.step.virtual_stages: 4 layers do not split into pipeline 2 x 3 virtual stages")
        self.refused(chunks(2, global_batch=6), "parallelism.step.virtual_stages: the interleaved schedule runs "
                     "micro-batches in groups of pipeline 2, and a replica has 3")
        self.refused({"parallelism": {"data": 2, "step": {"model": "tiny", "efficiency": 0.5, "virtual_stages": 2}}},
                     "parallelism.step.virtual_stages: 2 model chunks need pipeline parallelism")
        self.refused(chunks(0), "parallelism.step.virtual_stages")
        self.refused(chunks(1, pipeline_scatter_gather="yes"), "parallelism.step.pipeline_scatter_gather: must be true or false")
        self.refused(STEP, "--baseline: a parallel run compares a training step with faults", "--baseline")
        self.refused({**base, "workers": 3}, "workers: 3 given", "--svg", "t.svg", "--trace", "t.json", "--html", "t.html")

    def validate_plan(self, scenario):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            run = subprocess.run([COLLSIM, "validate", "--plan", str(path)], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        return json.loads(run.stdout)

    def test_validate_plan_prints_the_parallel_runs_own_plan(self):
        # a step: no plain collective's payload, algorithm or model; the step's own figures:
        # tiny's 4 blocks on 2 stages, 8 sequences over 2 replicas = 4 micro-batches each, a
        # block's forward (24 s h^2 + 4 s^2 h, h = s = 256) over 2 tensor GPUs at half the H100's peak
        plan = self.validate_plan(STEP)
        for unused in ["payload", "algorithm", "model", "training"]:
            self.assertNotIn(unused, plan)
        step = plan["parallel"]["step"]
        self.assertEqual(plan["parallel"]["layout"], {"tensor": 2, "pipeline": 2, "data": 2, "expert": 1, "workers": 8})
        self.assertEqual(step["micro_batches"], 4)
        self.assertEqual(step["stage_blocks"], [2, 2])
        h = s = 256
        self.assertAlmostEqual(step["forward_seconds"], (24 * s * h * h + 4 * s * s * h) / 2 / (0.5 * 989.5e12),
                               delta=1e-12 * step["forward_seconds"])
        self.assertEqual(step["pipeline_bytes"], 2 * s * h)
        self.assertIsNotNone(step["algorithms"]["tensor_allreduce"])
        self.assertIsNone(step["algorithms"]["expert_alltoall"])
        # plain collectives: each communicator's groups and algorithm
        plan = self.validate_plan({"topology": "star:4", "parallelism": {"tensor": 2, "data": 2, "collectives": [
            {"group": "data", "algorithm": "ring", "size": "1MiB"}]}})
        self.assertNotIn("payload", plan)
        [communicator] = plan["parallel"]["communicators"]
        self.assertEqual(communicator["groups"], [[0, 2], [1, 3]])
        self.assertEqual(communicator["algorithm"], "ring")
        self.assertEqual(communicator["size"], 1048576)

    def test_a_lost_worker_under_rebuild_is_in_the_summary_and_the_trace(self):
        scenario = {**STEP, "faults": [{"kind": "preempt", "rank": 5, "at": "10us"}], "recovery": {"policy": "rebuild"}}
        run, folder = self.run_scenario_keeping(scenario, "--trace", "t.json", "--baseline")
        self.assertEqual(run.returncode, 0, run.stderr)
        # --baseline: the same step without the fault, run apart
        healthy, _ = self.run_scenario(STEP)
        healthy_step = re.search(r"(?m)^step time\s+(\S+ \S+):", healthy.stdout)[1]
        self.assertIn(f"against the fault-free step ({healthy_step}, --baseline)", run.stdout)
        # world = t + 2 (d + 2 s): rank 5 is tensor 1, data 0, stage 1; replica d = 0 is 0, 1, 4, 5
        self.assertIn("recovery epoch 0 -> 1: dropped ranks 0, 1, 4, 5: dead or cut off from the coordinator", run.stdout)
        trace = json.loads((Path(folder.name) / "t.json").read_text())
        schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "trace.schema.json").read_text())
        jsonschema.validate(trace, schema, cls=jsonschema.Draft202012Validator)
        [entry] = trace["parallel"]["recovery"]
        self.assertEqual(entry["dropped_ranks"], [0, 1, 4, 5])
        self.assertEqual(entry["group"], [2, 3, 6, 7])
        self.assertEqual(entry["data_groups"], [[2], [3], [6], [7]])
        self.assertAlmostEqual(entry["fault_time"], 10e-6, delta=1e-15)
        self.assertEqual(entry["round_completed"], trace["parallel"]["step_time"])
        self.assertTrue(trace["parallel"]["verified"])
        # "most exposed" never names a rank that left, even where every rank waited 0 s (expert)
        most_exposed = trace["parallel"]["step"]["figures"]["most_exposed"]
        for name, worst in most_exposed.items():
            self.assertNotIn(worst["rank"], entry["dropped_ranks"], name)
        self.assertEqual(most_exposed["expert"], {"rank": 2, "seconds": 0})
        folder.cleanup()
        # without recovery the step stalls: exit 1, the stall names the fault
        run, folder = self.run_scenario_keeping({**scenario, "recovery": {"policy": "none"}})
        folder.cleanup()
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("preempt lost host host-5 (rank 5) at 10 us", run.stdout + run.stderr)

    def test_a_lost_worker_at_any_moment_leaves_no_simgrid_backtrace(self):
        # A stream that recovery stops (or a transfer a fault breaks under policy "none") leaves
        # transfers running; their handles must outlive the actor, or SimGrid prints "Comm freed
        # before its completion" with a backtrace. Probed at 12 moments of each step, a rank each
        # time, in a tensor x pipeline x data layout and in the pipeline x data one whose last
        # allreduces run alone, under both policies.
        tiny = {"model": "tiny", "global_batch": 6, "efficiency": 0.5, "algorithms": {"data": "ring"}}
        layouts = [{**STEP, "parallelism": {**STEP["parallelism"], "step": {**STEP["parallelism"]["step"],
                                                                           "algorithms": {"data": "ring"}}}},
                   {"topology": "star:6:1000GBps:1us", "parallelism": {"pipeline": 2, "data": 3,
                                                                        "step": {**tiny, "layers": 2}}}]
        for healthy in layouts:
            run, folder = self.run_scenario_keeping(healthy, "--trace", "t.json")
            self.assertEqual(run.returncode, 0, run.stderr)
            step_time = json.loads((Path(folder.name) / "t.json").read_text())["parallel"]["step_time"]
            folder.cleanup()
            ranks = 8 if "tensor" in healthy["parallelism"] else 6
            for k in range(1, 13):
                for policy in ("rebuild", "none"):
                    scenario = {**healthy, "faults": [{"kind": "preempt", "rank": k % ranks, "at": step_time * k / 13}],
                                "recovery": {"policy": policy}}
                    run, folder = self.run_scenario_keeping(scenario)
                    folder.cleanup()
                    where = f"{policy}, rank {k % ranks} at {k}/13 of the step"
                    self.assertNotIn("Backtrace", run.stderr, where)
                    self.assertNotIn("freed before", run.stdout + run.stderr, where)
                    self.assertIn(run.returncode, (0, 1) if policy == "none" else (0,), f"{where}: {run.stderr}")

    def single_run(self, *flags):
        with tempfile.TemporaryDirectory() as folder:
            run = subprocess.run([COLLSIM, "run", "--quiet", "--trace", "t.json", *flags], cwd=folder,
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            return json.loads((Path(folder) / "t.json").read_text())

    def parallel_run(self, scenario):
        run, folder = self.run_scenario_keeping(scenario, "--trace", "t.json")
        self.assertEqual(run.returncode, 0, run.stderr)
        trace = json.loads((Path(folder.name) / "t.json").read_text())
        folder.cleanup()
        return trace

    def nccl_alone(self, *flags):
        """NCCL's choice for the same allreduce in a run of its own (NVLS, NVLSTree and CollNet
        included: a parallel run runs them in its groups' switches too)."""
        return self.single_run(*flags, "--algorithm", "nccl")

    def test_a_communicator_on_gpus_runs_as_its_collective_runs_alone(self):
        # On GPUs a communicator's collective pays what the same collective pays in a run of its
        # own (NCCL's send/recv for collsim's ring; NCCL's tuner and transport for "nccl"), each
        # message's protocol and hop, but for the launches: alone, collsim's ring is a collective
        # written on send/recv, a kernel per step (each of its 2(p-1) steps launched once its
        # message is in); in a parallel run it stands in for NCCL's own collective, one kernel,
        # launched once from its own vector (NCCL 2.25.1's Ring baseLat, tuning.cc: LL 6.6 us up
        # to channels per peer x NCCL_P2P_LL_THRESHOLD 16 KiB, Simple 8.4 us above; 32 channels
        # per peer inside one DGX H100, 2 across nodes). The tensor group of node 0 against one
        # dgx-h100 node alone; the data-parallel group {0, 8} against GPU 0 of two nodes alone.
        def launch(message_bytes, group):
            return 6.6e-6 if message_bytes <= (32 if group == "tensor" else 2) * 16384 else 8.4e-6
        def bytes_of(size):
            return {"8KiB": 8192, "4MiB": 4 << 20}[size]
        alone_flags = {"tensor": ["--topology", "dgx-h100:1"],
                       "data": ["--topology", "dgx-h100:2", "--workers", "2",
                                "--set", 'placement=["node-0-gpu-0","node-1-gpu-0"]']}
        ranks = {"tensor": [list(range(8))], "data": [[0, 8]]}
        for size in ("8KiB", "4MiB"):
            for group in ("tensor", "data"):
                for algorithm in ("ring", "nccl"):
                    where = f"{algorithm} at {size} in the {group} group"
                    alone = (self.nccl_alone(*alone_flags[group], "--size", size) if algorithm == "nccl"
                             else self.single_run(*alone_flags[group], "--algorithm", "ring", "--size", size))
                    scenario = {"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "collectives": [
                        {"ranks": ranks[group], "algorithm": algorithm, "size": size}]}}
                    trace = self.parallel_run(scenario)
                    [communicator] = trace["parallel"]["communicators"]
                    self.assertTrue(trace["parallel"]["verified"], where)
                    self.assertEqual(communicator["algorithm"], alone["plan"]["algorithm"]["name"], where)
                    expected = alone["summary"]["simulated_time"]
                    if algorithm == "ring":
                        p = len(ranks[group][0])
                        expected += launch(bytes_of(size), group) - 2 * (p - 1) * launch(bytes_of(size) / p, group)
                    self.assertAlmostEqual(communicator["time"] / expected, 1, delta=1e-9, msg=where)
                    [planned] = self.validate_plan(scenario)["parallel"]["communicators"]
                    if algorithm == "nccl":
                        nccl = alone["plan"]["algorithm"]["parameters"]["nccl"]
                        self.assertIn(f"NCCL's tuner chose {nccl['algo']}/{nccl['proto']} on {nccl['channels']} channel",
                                      communicator["reason"], where)
                    else:
                        self.assertAlmostEqual(planned["launch"], launch(bytes_of(size), group), delta=1e-15)
        # by hand, NCCL's Ring/LL latency at 8 KiB (tuning.cc, 2.25.1): baseLat 6.6 us + 2(p-1) hops;
        # on NVLink hwLat 0.6 us: 6.6 + 14 x 0.6 = 15 us for one node of 8; across the network
        # with one GPU per node the tree's LL hwLat 5 us serves: 6.6 + 2 x 5 = 16.6 us for {0, 8}
        for group, latency in (("tensor", "15 us"), ("data", "16.6 us")):
            [planned] = self.validate_plan({"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "collectives": [
                {"ranks": ranks[group], "algorithm": "nccl", "size": "8KiB"}]}})["parallel"]["communicators"]
            self.assertIn(f"NCCL's tuner chose Ring/LL on 1 channel: predicted", planned["reason"])
            self.assertIn(f"({latency} latency + 8 KiB", planned["reason"])

    def test_a_step_on_gpus_runs_nccls_choice_per_communicator(self):
        # tensor 8 x data 2 on two DGX H100 (tiny model): the tensor allreduce is NCCL's choice
        # for one node of 8 at the block's b x s x h x 2 bytes (128 KiB), the data-parallel one
        # for two nodes of one GPU at the bucket's bytes; the first forward allreduce (nothing
        # else in flight) takes what the same allreduce takes alone.
        scenario = {"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "step": {
            "model": "tiny", "layers": 2, "global_batch": 2, "efficiency": 0.5,
            "algorithms": {"tensor": "nccl", "data": "nccl"}}}}
        plan = self.validate_plan(scenario)["parallel"]["step"]
        tensor, data = plan["algorithms"]["tensor_allreduce"], plan["algorithms"]["data_reduce"]
        bucket = int(plan["buckets"][0][0]["bytes"])
        alone_tensor = self.nccl_alone("--topology", "dgx-h100:1", "--size", "131072", "--dtype", "bfloat16")
        alone_data = self.nccl_alone("--topology", "dgx-h100:2", "--workers", "2",
                                     "--set", 'placement=["node-0-gpu-0","node-1-gpu-0"]', "--size", str(bucket),
                                     "--dtype", "bfloat16")
        for chosen, alone in ((tensor, alone_tensor), (data, alone_data)):
            nccl = alone["plan"]["algorithm"]["parameters"]["nccl"]
            self.assertEqual(chosen["name"], alone["plan"]["algorithm"]["name"])
            self.assertEqual(chosen["nccl"], f"{nccl['algo']}/{nccl['proto']} on {nccl['channels']} channels")
        trace = self.parallel_run(scenario)
        self.assertTrue(trace["parallel"]["verified"])
        first = min((r for r in trace["parallel"]["step"]["runs"] if r["communicator"] == "tensor"),
                    key=lambda r: r["start"])
        self.assertAlmostEqual((first["end"] - first["start"]) / alone_tensor["summary"]["simulated_time"], 1,
                               delta=1e-9)

    def test_the_pipelines_gather_pays_send_recv_beside_nccls_allreduce(self):
        # Megatron-LM's scatter/gather of the pipeline's tensors (tensor 8 x pipeline 2 on two DGX
        # H100, tiny model, one micro-batch): each GPU sends 1/8 of the b s h activation, and the
        # receiving tensor group all-gathers it. The block's allreduce is NCCL's, forced to Simple
        # (nccl.proto); the gather is collsim's ring on NCCL's send/recv (collsim has none of
        # NCCL's allgather), so its messages pay send/recv's price (LL at these sizes), not the
        # allreduce's Simple transport. Stage 1's first gather (nothing else in flight on its
        # node's NVLink) takes what the same ring allgather of one DGX H100 takes alone, but for
        # the launches: alone a kernel per step ((p - 1) steps, each launched as its message is
        # in: LL's 6.6 us, NCCL 2.25.1's Ring baseLat, tuning.cc), in the step one kernel for the
        # collective (LL's 6.6 us: the vector is under 32 channels per peer x 16 KiB)
        scenario = {"topology": "dgx-h100:2", "nccl": {"proto": "Simple"},
                    "parallelism": {"tensor": 8, "pipeline": 2, "step": {
                        "model": "tiny", "layers": 2, "global_batch": 1, "efficiency": 0.5,
                        "pipeline_scatter_gather": True, "algorithms": {"tensor": "nccl"}}}}
        plan = self.validate_plan(scenario)["parallel"]["step"]
        gather = plan["algorithms"]["pipeline_gather"]
        self.assertEqual(gather["name"], "ring")
        self.assertIn("/Simple on", plan["algorithms"]["tensor_allreduce"]["nccl"])
        whole = plan["pipeline_bytes"] * 8  # b s h bf16: each GPU sent 1/8
        self.assertEqual(whole, 2 * 256 * 256)  # tiny: s = h = 256, micro-batch 1
        self.assertLess(whole, 32 * 16384)
        alone = self.single_run("--topology", "dgx-h100:1", "--algorithm", "ring", "--collective", "allgather",
                                "--size", str(int(whole)), "--dtype", "bfloat16")
        trace = self.parallel_run(scenario)
        self.assertTrue(trace["parallel"]["verified"])
        gathers = [r for r in trace["parallel"]["step"]["runs"]
                   if r["communicator"] == "tensor" and r["collective"] == "allgather"]
        self.assertEqual(len(gathers), 2)  # stage 1's group after the activation, stage 0's after its gradient
        self.assertTrue(all(r["verified"] for r in gathers))
        first = min(gathers, key=lambda r: r["start"])
        expected = alone["summary"]["simulated_time"] + 6.6e-6 - 7 * 6.6e-6
        self.assertAlmostEqual((first["end"] - first["start"]) / expected, 1, delta=1e-9)

    def test_each_bucket_size_runs_nccls_choice_for_its_own_bytes(self):
        # tiny's 4 blocks (hidden 512) over tensor 8 x data 2 on two DGX H100, buckets of 700,000
        # parameters: 3 blocks of 262,848 per GPU fill the first (1,577,088 bytes), the last
        # holds the fourth and the embedding (689,792 bytes). NCCL chooses per call (here LL128
        # for the first, LL for the last): each size's choice is the one NCCL makes for two
        # nodes of one GPU at that size alone, and the step's last bucket (nothing else in
        # flight then) takes what that allreduce takes alone
        scenario = {"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "step": {
            "model": "tiny", "hidden": 512, "global_batch": 2, "efficiency": 0.5, "bucket_parameters": 700000,
            "algorithms": {"data": "nccl"}}}}
        plan = self.validate_plan(scenario)["parallel"]["step"]
        choices = plan["algorithms"]["data_choices"]
        buckets = plan["buckets"][0]
        self.assertEqual(plan["algorithms"]["data_reduce"], choices[0]["reduce"])
        self.assertGreater(len({b["bytes"] for b in buckets}), 1, buckets)
        self.assertGreater(len(choices), 1, choices)  # the sizes' choices differ
        placed = ["--topology", "dgx-h100:2", "--workers", "2", "--set", 'placement=["node-0-gpu-0","node-1-gpu-0"]',
                  "--dtype", "bfloat16"]
        alone = {}
        for bucket in buckets:
            size = int(bucket["bytes"])
            alone[size] = self.nccl_alone(*placed, "--size", str(size))
            nccl = alone[size]["plan"]["algorithm"]["parameters"]["nccl"]
            chosen = choices[bucket["data_choice"]]["reduce"]
            self.assertEqual(chosen["nccl"], f"{nccl['algo']}/{nccl['proto']} on {nccl['channels']} channels", size)
        trace = self.parallel_run(scenario)
        self.assertTrue(trace["parallel"]["verified"])
        last = max((r for r in trace["parallel"]["step"]["runs"] if r["communicator"] == "data"), key=lambda r: r["start"])
        self.assertAlmostEqual((last["end"] - last["start"]) / alone[int(buckets[-1]["bytes"])]["summary"]["simulated_time"],
                               1, delta=1e-9)

    def test_nvls_and_collnet_reduce_in_their_groups_switches(self):
        # NVLS inside a node, CollNet across nodes, inside a parallel run, each verified, by hand
        # (docs/nccl.md; the single-run oracles of tests/sim/nccl_test.cpp): NVLS sends one chunk
        # up, its slices down, the reduced slices up, the chunk down, each at the NVLink port's
        # 450 GB/s with NVLink's 25/20.6 and NVLS's 1/0.85 wire bytes, after its 25 us (baseLat +
        # NVLink hwLat); CollNetChain with one GPU per node: the GPU's 32 KiB to its rail's SHARP
        # switch and back through its NIC (50 GB/s, InfiniBand's 4122/4096 wire bytes), each way
        # half of the tree's 14 us network hwLat (Simple, one GPU per node), no baseLat.
        nvls_factor = 25 / 20.6 / 0.85

        def nvls(n, gpus):
            return 25e-6 + (2 * round(n * nvls_factor) + 2 * round(n / gpus * nvls_factor)) / 450e9
        chain = 2 * (7e-6 + round(32768 * 4122 / 4096) / 50e9)
        # both tensor groups of dgx-h100:2 reduce in their own node's NVSwitch at once
        trace = self.parallel_run({"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "collectives": [
            {"group": "tensor", "algorithm": "nccl-nvls", "size": "64KiB"}]}})
        self.assertTrue(trace["parallel"]["verified"])
        [tensor] = trace["parallel"]["communicators"]
        self.assertEqual(len(tensor["groups"]), 2)
        for group in tensor["groups"]:
            self.assertAlmostEqual((group["end"] - group["start"]) / nvls(65536, 8), 1, delta=1e-9)
        # NVLS in each node of two GPUs and CollNet in each rail's switch at once (NVLink ports and
        # NICs apart: each takes its time alone); the plan's model prices each the same
        scenario = {"topology": "rail:2:2:h100:ndr-sharp", "parallelism": {"tensor": 2, "data": 2, "collectives": [
            {"group": "tensor", "algorithm": "nccl-nvls", "size": "64KiB"},
            {"group": "data", "algorithm": "nccl-collnet-chain", "size": "32KiB"}]}}
        trace = self.parallel_run(scenario)
        self.assertTrue(trace["parallel"]["verified"])
        tensor, data = trace["parallel"]["communicators"]
        for communicator, expected in ((tensor, nvls(65536, 2)), (data, chain)):
            self.assertEqual(len(communicator["groups"]), 2)
            self.assertAlmostEqual(communicator["time"] / expected, 1, delta=1e-9, msg=communicator["algorithm"])
        for planned, expected in zip(self.validate_plan(scenario)["parallel"]["communicators"], (nvls(65536, 2), chain)):
            self.assertAlmostEqual(planned["model_time"] / expected, 1, delta=1e-9)
        # a step: NVLS named for the tensor group of 8 (one chunk of tiny's 128 KiB; NCCL's tuner
        # picks Ring/LL at that size), and every one of its tensor allreduces (2 blocks x 2 forward and 2 backward) takes NVLS's time
        # alone; on SHARP NICs each data group {t, 8 + t} reduces its buckets in rail t's switch, the
        # last bucket (nothing else in flight) as the same CollNetChain allreduce alone
        step = {"topology": "dgx-h100:2:ndr-sharp", "parallelism": {"tensor": 8, "data": 2, "step": {
            "model": "tiny", "layers": 2, "global_batch": 2, "efficiency": 0.5,
            "algorithms": {"tensor": "nccl-nvls", "data": "nccl-collnet-chain"}}}}
        plan = self.validate_plan(step)["parallel"]["step"]
        self.assertEqual(plan["algorithms"]["tensor_allreduce"]["nccl"], "NVLS/Simple on 16 channels")
        trace = self.parallel_run(step)
        self.assertTrue(trace["parallel"]["verified"])
        runs = trace["parallel"]["step"]["runs"]
        tensor_runs = [r for r in runs if r["communicator"] == "tensor"]
        self.assertEqual(len(tensor_runs), 2 * 8)
        for run in tensor_runs:
            self.assertAlmostEqual((run["end"] - run["start"]) / nvls(131072, 8), 1, delta=1e-9)
        bucket = int(plan["buckets"][0][-1]["bytes"])
        alone = self.single_run("--topology", "dgx-h100:2:ndr-sharp", "--workers", "2", "--set",
                                'placement=["node-0-gpu-0","node-1-gpu-0"]', "--algorithm", "nccl-collnet-chain",
                                "--size", str(bucket), "--dtype", "bfloat16")
        data_runs = [r for r in runs if r["communicator"] == "data"]
        self.assertEqual(len(data_runs), 8 * len(plan["buckets"][0]))
        last = max(data_runs, key=lambda r: r["start"])
        self.assertAlmostEqual((last["end"] - last["start"]) / alone["summary"]["simulated_time"], 1, delta=1e-9)

    def test_nccl_in_a_parallel_run_is_refused_where_it_cannot_run(self):
        on_star = {"topology": "star:4", "parallelism": {"tensor": 2, "data": 2, "collectives": [
            {"group": "tensor", "algorithm": "nccl", "size": "1MiB"}]}}
        self.refused(on_star, "parallelism.collectives.0.algorithm: NCCL's algorithms run on GPUs")
        gather = {"topology": "dgx-h100:1", "parallelism": {"tensor": 8, "collectives": [
            {"group": "tensor", "kind": "allgather", "algorithm": "nccl", "size": "1MiB"}]}}
        self.refused(gather, "parallelism.collectives.0.algorithm: NCCL's algorithms run here for an allreduce only")
        nvls = {"topology": "dgx-a100:1", "parallelism": {"tensor": 8, "collectives": [
            {"group": "tensor", "algorithm": "nccl-nvls", "size": "1MiB"}]}}
        self.refused(nvls, "parallelism.collectives.0.algorithm: ")
        self.refused(nvls, "no NVSwitch that reduces")
        # a step's data-parallel groups are rebuilt under recovery: CollNet's switches would not follow
        collnet = {"topology": "dgx-h100:2:ndr-sharp", "recovery": {"policy": "rebuild"}, "parallelism": {
            "tensor": 8, "data": 2, "step": {"model": "tiny", "layers": 2, "global_batch": 2, "efficiency": 0.5,
                                             "algorithms": {"data": "nccl-collnet-chain"}}}}
        self.refused(collnet, "its switches do not follow a rebuilt group: not with recovery")
        step = {"topology": "dgx-h100:1", "parallelism": {"tensor": 8, "step": {
            "model": "tiny", "layers": 2, "global_batch": 1, "efficiency": 0.5, "sequence_parallel": True,
            "algorithms": {"tensor": "nccl"}}}}
        self.refused(step, "parallelism.step.algorithms.tensor: NCCL's algorithms run here for an allreduce only")

    def test_the_nccl_section_forces_the_communicators_that_run_nccl(self):
        # nccl.proto and nccl.channels force NCCL's tuner for every communicator whose algorithm
        # is NCCL's, as NCCL_PROTO and NCCL_MIN/MAX_NCCL_CHANNELS force every communicator of a
        # process: the tensor group of node 0 runs what the same allreduce runs alone under the
        # same forcing (its choice, and its time to 1e-9), which is not what it runs unforced;
        # a ring beside it in the same run keeps its own launch (NCCL's send/recv, 8.4 us Simple)
        group = {"ranks": [list(range(8))], "algorithm": "nccl", "size": "4MiB"}
        ring = {"group": "data", "algorithm": "ring", "size": "4MiB"}
        base = {"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "collectives": [group, ring]}}
        for forced in ({"proto": "LL", "channels": 4}, {"proto": "LL128"}, {"channels": 2}):
            where = str(forced)
            flags = [f"nccl.{key}={value}" for key, value in forced.items()]
            alone = self.nccl_alone("--topology", "dgx-h100:1", "--size", "4MiB",
                                    *[arg for flag in flags for arg in ("--set", flag)])
            nccl = alone["plan"]["algorithm"]["parameters"]["nccl"]
            self.assertEqual(nccl["proto"], forced.get("proto", nccl["proto"]), where)
            self.assertEqual(nccl["channels"], forced.get("channels", nccl["channels"]), where)
            scenario = {**base, "nccl": forced}
            trace = self.parallel_run(scenario)
            self.assertTrue(trace["parallel"]["verified"], where)
            tensor, data = trace["parallel"]["communicators"]
            self.assertIn(f"NCCL's tuner chose {nccl['algo']}/{nccl['proto']} on {nccl['channels']} channel",
                          tensor["reason"], where)
            self.assertAlmostEqual(tensor["time"] / alone["summary"]["simulated_time"], 1, delta=1e-9, msg=where)
            planned = self.validate_plan(scenario)["parallel"]["communicators"]
            self.assertAlmostEqual(planned[1]["launch"], 8.4e-6, delta=1e-15)
        unforced = self.parallel_run(base)["parallel"]["communicators"][0]
        self.assertNotIn("/LL on 4 channel", unforced["reason"])
        # a step: the tensor allreduces ("nccl") take the forced channels, the data ring nothing
        step = {"topology": "dgx-h100:2", "nccl": {"channels": 2}, "parallelism": {"tensor": 8, "data": 2, "step": {
            "model": "tiny", "layers": 2, "global_batch": 2, "efficiency": 0.5,
            "algorithms": {"tensor": "nccl", "data": "ring"}}}}
        plan = self.validate_plan(step)["parallel"]["step"]
        self.assertTrue(plan["algorithms"]["tensor_allreduce"]["nccl"].endswith(" on 2 channels"),
                        plan["algorithms"]["tensor_allreduce"])
        self.assertTrue(self.parallel_run(step)["parallel"]["verified"])
        # gpu_cost false: collsim's own algorithms pay their links alone (no launch), NCCL's cannot run
        plan = self.validate_plan({**base, "nccl": {"gpu_cost": False},
                                   "parallelism": {**base["parallelism"], "collectives": [ring]}})
        self.assertEqual(plan["parallel"]["communicators"][0]["launch"], 0)
        self.refused({**base, "nccl": {"gpu_cost": False}},
                     "parallelism.collectives.0.algorithm: NCCL's algorithms run on GPUs")

    def test_the_nccl_section_is_refused_where_no_communicator_reads_it(self):
        rings = {"topology": "dgx-h100:2", "parallelism": {"tensor": 8, "data": 2, "collectives": [
            {"group": "tensor", "algorithm": "ring", "size": "1MiB"}]}}
        self.refused({**rings, "nccl": {"proto": "LL"}},
                     "collsim: error: nccl.proto: only NCCL's algorithms read it, and no communicator runs one")
        step = {"topology": "dgx-h100:2", "nccl": {"channels": 4}, "parallelism": {"tensor": 8, "data": 2, "step": {
            "model": "tiny", "layers": 2, "global_batch": 2, "efficiency": 0.5}}}
        self.refused(step, "nccl.channels: only NCCL's algorithms read it")
        self.refused(step, "parallelism.step.algorithms)")
        nvls = {"topology": "dgx-h100:1", "nccl": {"proto": "LL"}, "parallelism": {"tensor": 8, "collectives": [
            {"group": "tensor", "algorithm": "nccl-nvls", "size": "1MiB"}]}}
        self.refused(nvls, "nccl.proto: NCCL runs NVLS with Simple only; allowed: Simple")
        ring = {"topology": "dgx-h100:1", "nccl": {"algo": "Tree"}, "parallelism": {"tensor": 8, "collectives": [
            {"group": "tensor", "algorithm": "nccl-ring", "size": "1MiB"}]}}
        self.refused(ring, "nccl.algo: Tree contradicts parallelism.collectives.0.algorithm 'nccl-ring'")
        self.refused({**rings, "nccl": {"pxn": False}}, "nccl.pxn: a parallel run builds its platform without PXN routes")
        self.refused({**rings, "nccl": {"launch": "step"}}, "nccl.launch: a parallel run's collectives are a framework's")
        self.refused({**rings, "nccl": {"channels": 0}}, "nccl.channels")
        self.refused({**rings, "nccl": {"protocol": "LL"}}, "nccl")

    def run_scenario_keeping(self, scenario, *flags):
        folder = tempfile.TemporaryDirectory()
        path = Path(folder.name) / "s.json"
        path.write_text(json.dumps(scenario))
        run = subprocess.run([COLLSIM, "run", str(path), *flags], capture_output=True, text=True, timeout=300,
                             cwd=folder.name)
        return run, folder

    def test_compare_fails_on_a_slower_step_or_communicator_and_render_draws_the_lanes(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            (folder / "s.json").write_text(json.dumps(STEP))
            run = subprocess.run([COLLSIM, "run", "s.json", "--trace", "t.json", "--perfetto", "p.json", "--html",
                                  "s.html", "--quiet"],
                                 cwd=folder, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            trace = json.loads((folder / "t.json").read_text())
            self.assertIn("<h2>Lanes</h2>", (folder / "s.html").read_text())

            def compare(baseline, *flags):
                (folder / "base.json").write_text(json.dumps(baseline))
                return subprocess.run([COLLSIM, "compare", "base.json", "t.json", *flags], cwd=folder,
                                      capture_output=True, text=True, timeout=60)

            same = compare(trace)
            self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
            self.assertIn("0 regression(s), 0 improvement(s), 0 missing, 0 new; 1 entries compared", same.stdout)
            # a baseline whose step was 10% faster: the current step is a regression
            faster = json.loads(json.dumps(trace))
            faster["parallel"]["step_time"] /= 1.1
            slower = compare(faster)
            self.assertEqual(slower.returncode, 1, slower.stdout)
            self.assertRegex(slower.stdout, r"regression\s+s\s+step_time")
            # one communicator 10% faster in the baseline: its comm_time is a regression, unless tolerated
            data = next(c for c in faster["parallel"]["communicators"] if c["name"] == "data")
            faster["parallel"]["step_time"] = trace["parallel"]["step_time"]
            data["time"] /= 1.1
            one = compare(faster)
            self.assertEqual(one.returncode, 1, one.stdout)
            self.assertRegex(one.stdout, r"regression\s+s\s+comm_time\.data")
            self.assertNotIn("step_time", one.stdout)
            self.assertEqual(compare(faster, "--tolerance", "comm_time.data=20%").returncode, 0)
            renamed = json.loads(json.dumps(trace))
            renamed["scenario"]["name"] = "other"
            missing = compare(renamed)
            self.assertEqual(missing.returncode, 1, missing.stdout)
            self.assertIn("missing  other", missing.stdout)

            # render draws the trace's lanes: the very events the run drew
            drawn = subprocess.run([COLLSIM, "render", "t.json", "--perfetto", "r.json"], cwd=folder,
                                   capture_output=True, text=True, timeout=60)
            self.assertEqual(drawn.returncode, 0, drawn.stderr)
            self.assertEqual(json.loads((folder / "r.json").read_text()), json.loads((folder / "p.json").read_text()))
            # and its HTML report: the figures, and one bar per interval on one row per lane per rank
            drawn = subprocess.run([COLLSIM, "render", "t.json", "--html", "r.html"], cwd=folder,
                                   capture_output=True, text=True, timeout=60)
            self.assertEqual(drawn.returncode, 0, drawn.stderr)
            html = (folder / "r.html").read_text()
            intervals = trace["parallel"]["intervals"]
            self.assertEqual(html.count('<rect class="interval"'), len(intervals))
            for rank in range(8):
                for lane in ("compute", "tensor", "pipeline", "data"):
                    self.assertIn(f">rank {rank} {lane}</text>", html)
            self.assertIn(f"{trace['parallel']['step']['collectives']} collectives verified", html)
            self.assertIn("MFU", html)
            # --svg: the report's lanes alone, a picture of its own: the same rows and bars
            drawn = subprocess.run([COLLSIM, "render", "t.json", "--svg", "r.svg"], cwd=folder,
                                   capture_output=True, text=True, timeout=60)
            self.assertEqual(drawn.returncode, 0, drawn.stderr)
            svg = (folder / "r.svg").read_text()
            self.assertTrue(svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"'), svg[:80])
            self.assertTrue(svg.rstrip().endswith("</svg>"))
            self.assertEqual(svg.count('<rect class="interval"'), len(intervals))
            for rank in range(8):
                for lane in ("compute", "tensor", "pipeline", "data"):
                    self.assertIn(f">rank {rank} {lane}</text>", svg)
            xml.dom.minidom.parseString(svg)  # well-formed

    def test_plain_collectives_draw_one_lane_per_communicator(self):
        scenario = {"topology": "star:4", "parallelism": {"tensor": 2, "data": 2, "collectives": [
            {"group": "tensor", "size": "1MiB", "algorithm": "ring"},
            {"group": "data", "kind": "allgather", "size": "1MiB", "algorithm": "ring"}]}}
        with tempfile.TemporaryDirectory() as folder:
            perfetto = Path(folder) / "p.json"
            run, _ = self.run_scenario(scenario, "--perfetto", str(perfetto))
            self.assertEqual(run.returncode, 0, run.stderr)
            events = json.loads(perfetto.read_text())["traceEvents"]
            lanes = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
            self.assertEqual(lanes, {(rank + 1, lane) for rank in range(4) for lane in ("tensor", "data")})
            self.assertEqual(sorted(e["name"] for e in events if e["ph"] == "X"),
                             ["allgather ring"] * 4 + ["allreduce ring"] * 4)

    def test_validate_plans_the_step_and_names_its_errors(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(STEP))
            run = subprocess.run([COLLSIM, "validate", str(path)], capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("parallelism tensor 2 x pipeline 2 x data 2 (expert 1), a training step of tiny, 8 workers",
                          run.stdout)
            path.write_text(json.dumps({"parallelism": {"data": 2, "collectives": [{"group": "data", "algorithm": "nccl"}]}}))
            run = subprocess.run([COLLSIM, "validate", str(path)], capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("parallelism.collectives.0.algorithm: NCCL's algorithms run on GPUs",
                          run.stderr)

    def test_communicators_at_once_print_their_times_and_are_verified(self):
        run, _ = self.run_scenario({"topology": "rail:2:4", "parallelism": {
            "tensor": 4, "data": 2, "collectives": [{"group": "tensor", "size": "4MiB", "algorithm": "auto"},
                                                    {"group": "data", "kind": "allgather", "size": "1MiB"}]}})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("parallelism: tensor 4 x pipeline 1 x data 2 = 8 workers", run.stdout)
        self.assertIn("tensor   allreduce", run.stdout)
        self.assertIn("data     allgather ring", run.stdout)
        self.assertIn("verified: every group's result, 16 ranks checked", run.stdout)

    def test_a_step_prints_its_figures_and_draws_its_lanes(self):
        with tempfile.TemporaryDirectory() as folder:
            perfetto, svg = Path(folder) / "p.json", Path(folder) / "lanes.svg"
            run, _ = self.run_scenario(STEP, "--perfetto", str(perfetto), "--svg", str(svg))
            self.assertEqual(run.returncode, 0, run.stderr)
            # --svg draws the lanes Perfetto draws: one bar per complete event
            complete = [e for e in json.loads(perfetto.read_text())["traceEvents"] if e["ph"] == "X"]
            self.assertEqual(svg.read_text().count('<rect class="interval"'), len(complete))
            for words in ("step time", "tokens/s, MFU", "compute", "tensor", "pipeline", "data", "most exposed",
                          "verified:"):
                self.assertIn(words, run.stdout)
            events = json.loads(perfetto.read_text())["traceEvents"]
            lanes = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
            # every rank computes and meets its tensor peer; stage 0 and 1 ranks wait on the pipeline and the data group
            for rank in range(8):
                for lane in ("compute", "tensor", "pipeline", "data"):
                    self.assertIn((rank + 1, lane), lanes)


if __name__ == "__main__":
    unittest.main()
