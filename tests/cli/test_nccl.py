"""NCCL's algorithms as a user meets them: --algorithm nccl says what NCCL's tuner chose and
why, the nccl.* keys force it, and every wrong use of them is one line, exit 2."""
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

COLLSIM = os.environ.get("COLLSIM", str(Path(__file__).resolve().parents[2] / "build" / "collsim"))


def collsim(*args):
    return subprocess.run([COLLSIM, *map(str, args)], capture_output=True, text=True, timeout=120)


def seconds(text):
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


class NcclTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="collsim-nccl-"))

    def traced(self, *args):
        path = self.tmp / "t.json"
        done = collsim("run", "--quiet", "--trace", path, *args)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(path.read_text())

    def assert_bad(self, args, pattern):
        done = collsim("run", *args)
        self.assertEqual(done.returncode, 2, done.stderr)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertRegex(lines[0], r"^collsim: error: " + pattern)
        self.assertEqual(done.stdout, "")


class Choice(NcclTest):
    def test_nccl_says_what_the_tuner_chose_and_why(self):
        done = collsim("run", "--topology", "dgx-h100:2", "--algorithm", "nccl", "--size", "1GiB")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("allreduce / nccl-nvls-tree", done.stdout)
        note = re.search(r"note: NCCL's tuner chose (\w+)/(\w+) on (\d+) channels: predicted ([\d.]+) ms "
                         r"\(([\d.]+) us latency \+ 1 GiB at ([\d.]+) GB/s\), ([\d.]+)x faster than Ring/Simple "
                         r"\(([\d.]+) ms\)", done.stdout)
        self.assertIsNotNone(note, done.stdout)
        self.assertEqual((note.group(1), note.group(2)), ("NVLSTree", "Simple"))
        # NCCL's NVLSTree latency (tuning.cc 2.25.1): baseLat 0 + hwLat NVLink 25 us + 2 log2(2) x
        # hwLat network 14 us; its time is latency + bytes / bandwidth, and the ratio to the ring's
        self.assertAlmostEqual(float(note.group(5)), 25 + 2 * 14)
        predicted = float(note.group(5)) * 1e-3 + 2**30 / (float(note.group(6)) * 1e9) * 1e3
        self.assertAlmostEqual(float(note.group(4)), predicted, places=3)
        self.assertAlmostEqual(float(note.group(7)), float(note.group(8)) / float(note.group(4)), places=2)
        # NVLS's messages to and from the switch: NVLink's 25/20.6 (SM90_NVLINK_BW) and nvlsEfficiency 0.85
        self.assertIn("NCCL's transport for NVLSTree/Simple", done.stdout)
        self.assertIn(f"{25 / 20.6 / 0.85:.4g} wire bytes per byte on NVLink (to and from the NVSwitch)", done.stdout)
        self.assertIn("verified        yes", done.stdout)

    def test_the_plan_records_the_choice_in_nccls_names(self):
        trace = self.traced("--topology", "dgx-h100:1", "--algorithm", "nccl", "--size", "8B")
        algorithm = trace["plan"]["algorithm"]
        self.assertEqual(algorithm["chosen_by"], "nccl")
        self.assertEqual(algorithm["parameters"]["nccl"], {"algo": "Ring", "proto": "LL", "channels": 1})
        self.assertEqual(trace["scenario"]["nccl"], {"pxn": True})

    def test_forced_protocol_and_channels_are_what_runs(self):
        trace = self.traced("--topology", "dgx-h100:2", "--algorithm", "nccl-ring", "--size", "1MiB",
                            "--set", "nccl.proto=Simple", "--set", "nccl.channels=3")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"],
                         {"algo": "Ring", "proto": "Simple", "channels": 3})
        self.assertEqual(trace["scenario"]["nccl"], {"proto": "Simple", "channels": 3, "pxn": True})
        # three rings: each rank sends 3 messages per step, 2(p-1) steps
        self.assertEqual(trace["summary"]["message_count"], 3 * 16 * 2 * 15)

    def test_pxn_keeps_crossings_on_their_rail_and_off_the_spine(self):
        def links(*extra):
            trace = self.traced("--topology", "dgx-h100:2", "--algorithm", "nccl-ring", "--size", "64MiB",
                                "--set", "nccl.channels=8", *extra)
            self.assertTrue(trace["summary"]["verified"])
            return {link["name"] for link in trace["links"]["list"]}
        # channel c leaves node i from GPU c-1 for GPU c of node i+1: with PXN through GPU c's
        # NIC (rail c), without it up rail c-1 to the spine and down rail c
        self.assertFalse(any(name.startswith("rail-") for name in links()))
        self.assertIn("rail-0_uplink_UP", links("--set", "nccl.pxn=false"))


    def test_nccl_runs_nvls_in_one_h100_node_and_the_tree_for_8_bytes_across_nodes(self):
        trace = self.traced("--topology", "dgx-h100:1", "--algorithm", "nccl", "--size", "64MiB")
        self.assertEqual(trace["plan"]["algorithm"]["name"], "nccl-nvls")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"]["algo"], "NVLS")
        self.assertTrue(trace["summary"]["verified"])
        # every message is one with the NVSwitch: 4 per GPU and step, steps of 16 channels x 64 KiB
        # (NCCL's computeColl: 64 MiB is below 64 x 16 channels x 8 GPUs x 128 KiB, not below
        # 8 x .. x 64 KiB), 64 of them
        self.assertEqual(trace["summary"]["message_count"], 4 * 8 * 64)
        trace = self.traced("--topology", "dgx-h100:2", "--algorithm", "nccl", "--size", "8B")
        self.assertEqual(trace["plan"]["algorithm"]["name"], "nccl-tree")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"], {"algo": "Tree", "proto": "LL", "channels": 1})
        self.assertTrue(trace["summary"]["verified"])

    def test_nvls_tree_runs_when_the_tuner_chooses_it_and_when_named(self):
        done = collsim("run", "--topology", "dgx-h100:2", "--algorithm", "nccl", "--size", "1MiB")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("NCCL's tuner chose NVLSTree/Simple", done.stdout)
        self.assertNotIn("NVLSTree (", done.stdout)  # not among what is left out
        trace = self.traced("--topology", "dgx-h100:4", "--algorithm", "nccl", "--size", "1MiB",
                            "--set", "nccl.algo=NVLSTree")
        self.assertEqual(trace["plan"]["algorithm"]["name"], "nccl-nvls-tree")
        self.assertTrue(trace["summary"]["verified"])

    def test_with_gradient_buckets_the_switches_reduce_each_bucket(self):
        # NVLS, NVLSTree and CollNet reduce in switch actors that run each bucket's collective (on
        # its tag with training.streams): 4 buckets of 16 KiB on one DGX H100, each one NVLS chunk:
        # 25 us + (2 x 16 KiB + 2 x 2 KiB) x 25/20.6 / 0.85 / 450 GB/s (docs/nccl.md, NVLS)
        factor = 25 / 20.6 / 0.85
        bucket = 25e-6 + (2 * round(16384 * factor) + 2 * round(2048 * factor)) / 450e9
        layers = ["--set", "training.layers.uniform.count=4", "--set", "training.layers.uniform.parameters=16384",
                  "--set", "training.layers.uniform.forward=1ms", "--set", "training.layers.uniform.backward=2ms",
                  "--set", "training.bucket=16KiB"]
        with tempfile.TemporaryDirectory() as tmp:
            for streams in ("1", "2"):
                with self.subTest(streams=streams):
                    trace_path = os.path.join(tmp, f"nvls-{streams}.json")
                    done = collsim("run", "--topology", "dgx-h100:1", "--algorithm", "nccl-nvls", *layers,
                                   "--set", f"training.streams={streams}", "--trace", trace_path)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    self.assertRegex(done.stdout, r"verified\s+yes")
                    summary = json.loads(Path(trace_path).read_text())["summary"]
                    self.assertAlmostEqual(summary["collective_time"] / (4 * bucket), 1, delta=1e-9)
                    self.assertAlmostEqual(summary["model_time"] / (4 * bucket), 1, delta=1e-9)
            # the tuner no longer passes over them: NVLSTree on two nodes, CollNet where SHARP is
            for topology, chosen in (("dgx-h100:2", "NVLSTree"), ("dgx-h100:2:ndr-sharp", "NVLSTree")):
                done = collsim("run", "--topology", topology, "--algorithm", "nccl", *layers[:-2],
                               "--set", "training.layers.uniform.parameters=1048576", "--set", "training.bucket=1MiB")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertRegex(done.stdout, rf"NCCL's tuner chose {chosen}/Simple")
                self.assertNotIn("one collective per round", done.stdout)
                self.assertRegex(done.stdout, r"verified\s+yes")
            for algorithm in ("nccl-collnet-direct", "nccl-collnet-chain"):
                done = collsim("run", "--topology", "dgx-h100:2:ndr-sharp", "--algorithm", algorithm, *layers[:-2],
                               "--set", "training.layers.uniform.parameters=1048576", "--set", "training.bucket=1MiB",
                               "--set", "training.streams=2")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertRegex(done.stdout, r"verified\s+yes")

    def test_model_all_ranks_nccls_variants_beside_collsims_algorithms(self):
        done = collsim("model", "--algorithm", "all", "--topology", "dgx-h100:2", "--workers", "16", "--size", "64MiB")
        self.assertEqual(done.returncode, 0, done.stderr)
        section = done.stdout.split("NCCL's algorithms")[1]
        rows = re.findall(r"(?m)^\s+\d+ (\w+)/(\w+)\s+(nccl-[\w-]+)\s+(?:(\d+) ch\s+([\d.]+ \w+)|not here: (.*))$", section)
        # Ring and Tree with LL, LL128 and Simple; CollNetDirect, CollNetChain, NVLS and NVLSTree with Simple only
        self.assertEqual(10, len(rows), section)
        self.assertIn("across nodes without CollNet", [r for r in rows if r[0] == "NVLS"][0][5])
        priced = [r for r in rows if r[4]]
        times = [seconds(r[4]) for r in priced]
        self.assertEqual(sorted(times), times)
        # each row is the model of that variant's run, which the simulation equals (docs/nccl.md)
        algo, proto, name, channels, _, _ = priced[0]
        run = collsim("run", "--topology", "dgx-h100:2", "--size", "64MiB", "--algorithm", name, "--set", f"nccl.proto={proto}")
        self.assertRegex(run.stdout, rf"simulated time\s+{re.escape(priced[0][4])}\n")
        self.assertIn(f"chose {algo}/{proto} on {channels} channels", run.stdout)
        # no GPUs, or not an allreduce: no NCCL
        for extra in (["--topology", "star:8", "--workers", "8"], ["--topology", "dgx-h100:1", "--workers", "8",
                                                                    "--collective", "broadcast"]):
            other = collsim("model", "--algorithm", "all", "--size", "1MiB", *extra)
            self.assertEqual(other.returncode, 0, other.stderr)
            self.assertNotIn("NCCL's algorithms", other.stdout)


class SwitchMessages(NcclTest):
    """The messages to and from a switch that reduces are in the trace, endpoint workers + s being
    switch s of plan.algorithm.parameters.nccl.switches (docs/trace-format.md#messages)."""

    def switch_traffic(self, *args):
        trace = self.traced(*args, "--messages", "all")
        self.assertTrue(trace["summary"]["verified"])
        p = trace["scenario"]["workers"]
        messages = trace["messages"]
        self.assertEqual(len(messages), trace["summary"]["message_count"])
        up = [m for m in messages if m["dst"] >= p]
        down = [m for m in messages if m["src"] >= p]
        return trace, p, messages, up, down

    def test_nvls_on_one_node_logs_four_messages_per_gpu_and_chunk(self):
        # NCCL's NVLS chunk per channel (computeColl): 128 KiB halved while 1 MiB is below 64, 8,
        # 2 x 16 channels x 8 GPUs x the chunk: 16 KiB; the 16 channels' chunks move as one step
        # (docs/nccl.md), 256 KiB, so 4 steps. Per step each GPU sends the chunk up (ld_reduce's
        # reads) and its 32 KiB slice up (multimem.st), the switch sends it its reduced slice and
        # the whole chunk: 4 x 8 x 4 messages, (1 + 1/8) MiB each way per GPU
        trace, p, messages, up, down = self.switch_traffic("--topology", "dgx-h100:1", "--algorithm", "nccl-nvls",
                                                           "--size", "1MiB")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"]["switches"], ["node-0-nvswitch"])
        self.assertEqual(len(messages), 4 * 8 * 4)
        self.assertEqual({m["dst"] for m in up} | {m["src"] for m in down}, {p})
        for gpu in range(p):
            sent = [m for m in up if m["src"] == gpu]
            got = [m for m in down if m["dst"] == gpu]
            self.assertEqual((len(sent), len(got)), (8, 8))
            self.assertEqual(sum(m["bytes"] for m in sent), 4 * (256 + 32) * 1024)
            self.assertEqual(sum(m["bytes"] for m in got), 4 * (32 + 256) * 1024)

    def test_nvls_tree_logs_each_nodes_switch_and_the_tree_between_gpus(self):
        # NVLSTree on two nodes (computeColl): 128 KiB, 64 KiB below 4 x 16 x 8 chunks, 32 KiB
        # below 1 x 16 x 8: steps of 16 x 32 KiB, 2 for 1 MiB; each GPU's 4 messages with its
        # node's switch per step, switch s serving node s; between GPUs, GPU i's 64 KiB slice up
        # the tree and back down across the two nodes: 2 x 8 pairs x 2 steps
        trace, p, messages, up, down = self.switch_traffic("--topology", "dgx-h100:2", "--algorithm", "nccl-nvls-tree",
                                                           "--size", "1MiB")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"]["switches"],
                         ["node-0-nvswitch", "node-1-nvswitch"])
        self.assertEqual(len(up) + len(down), 4 * 16 * 2)
        for m in up:
            self.assertEqual(m["dst"] - p, m["src"] // 8, m)
        for m in down:
            self.assertEqual(m["src"] - p, m["dst"] // 8, m)
        between = [m for m in messages if m["src"] < p and m["dst"] < p]
        self.assertEqual(len(between), 2 * 8 * 2)
        self.assertTrue(all(m["src"] // 8 != m["dst"] // 8 and m["bytes"] == 64 * 1024 for m in between))


class BadInput(NcclTest):
    H100x2 = ["--topology", "dgx-h100:2"]
    NCCL = [*H100x2, "--algorithm", "nccl"]
    # (what is asked, the one error line it gets after "collsim: error: ")
    CASES = [
        # the nccl keys need NCCL's algorithms
        ([*H100x2, "--algorithm", "ring", "--set", "nccl.proto=LL"],
         r"nccl\.proto: only NCCL's algorithms read it, and collective\.algorithm 'ring' is none of them; allowed "
         r"with: nccl, nccl-ring"),
        ([*H100x2, "--algorithm", "auto", "--set", "nccl.channels=2"], r"nccl\.channels: only NCCL's algorithms read it"),
        # unknown names and ranges
        ([*NCCL, "--set", "nccl.proto=LL64"], r"nccl\.proto: unknown NCCL protocol 'LL64'; allowed: Simple, LL, LL128"),
        ([*NCCL, "--set", "nccl.algo=ring"],
         r"nccl\.algo: unknown NCCL algorithm 'ring' \(did you mean 'Ring'\?\); allowed: Ring, Tree, NVLS, NVLSTree, "
         r"CollNetDirect, CollNetChain"),
        ([*NCCL, "--set", "nccl.channels=33"], r"nccl\.channels: 33 is out of range; allowed: 1 to 32"),
        ([*NCCL, "--set", "nccl.pxn=1"], r"nccl\.pxn: must be true or false, got 1"),
        ([*NCCL, "--set", "nccl.chanels=2"], r"nccl\.chanels: unknown key \(did you mean 'channels'\?\)"),
        # contradictions
        ([*H100x2, "--algorithm", "nccl-ring", "--set", "nccl.algo=Tree"],
         r"nccl\.algo: Tree contradicts collective\.algorithm 'nccl-ring' \(NCCL's Ring\)"),
        ([*NCCL, "--set", "nccl.algo=NVLS", "--set", "nccl.proto=LL"], r"nccl\.proto: NCCL runs NVLS with Simple only"),
        (["--collective", "broadcast", "--algorithm", "nccl"],
         r"collective\.algorithm: nccl runs NCCL's choice for an allreduce or an alltoall; for broadcast"),
        # in-switch reductions do not follow a regrouping
        (["--topology", "dgx-h100:1", "--algorithm", "nccl-nvls", "--set", "recovery.policy=rebuild"],
         r"collective\.algorithm: NCCL's NVLS reduces in its switches"),
        # NVLS across nodes also reduces through CollNet's switches, which collsim does not run
        (["--topology", "dgx-h100:2:ndr-sharp", "--algorithm", "nccl-nvls"],
         r"nccl\.algo: NCCL cannot run NVLS/Simple here: across nodes it reduces through CollNet's switches too"),
        # NCCL needs GPUs
        (["--topology", "star:8", "--algorithm", "nccl"],
         r"collective\.algorithm: NCCL's algorithms run on GPUs: the platform's hosts name no gpu"),
        # what alltoall does not read
        ([*NCCL, "--collective", "alltoall", "--set", "nccl.proto=LL"],
         r"nccl\.proto: NCCL's alltoall chooses its protocol per block"),
        ([*NCCL, "--collective", "alltoall", "--set", "nccl.algo=Ring"], r"nccl\.algo: NCCL runs alltoall point to point"),
        # gpu_cost: collsim's own algorithms read it, NCCL's always pay NCCL's costs
        ([*NCCL, "--set", "nccl.gpu_cost=false"],
         r"nccl\.gpu_cost: it says whether collsim's own algorithms pay a GPU's costs on a GPU platform; NCCL's always "
         r"pay NCCL's, parameter servers none; allowed with: auto, naive, naive-binomial, ring, "),
        ([*H100x2, "--algorithm", "parameter-server", "--set", "nccl.gpu_cost=false"], r"nccl\.gpu_cost: .*allowed with: auto"),
        ([*H100x2, "--algorithm", "ring", "--set", "nccl.gpu_cost=no"], r"nccl\.gpu_cost: must be true or false, got \"no\""),
    ]

    def test_each_wrong_use_is_one_line_exit_2(self):
        for args, pattern in self.CASES:
            with self.subTest(args=" ".join(args)):
                self.assert_bad(args, pattern)


class OneRank(NcclTest):
    """One rank: NCCL hands the collective to ncclLaunchOneRank (a copy, no tuner; src/enqueue.cc):
    no base latency, no message, whatever the variant (docs/nccl.md#nccls-transport)."""

    CASES = [("allreduce", "nccl", "dgx-h100:1"), ("allreduce", "nccl-tree", "dgx-h100:2"),
             ("allreduce", "nccl-nvls", "dgx-h100:1"), ("allreduce", "nccl-collnet-chain", "dgx-h100:2:ndr-sharp"),
             ("alltoall", "nccl", "dgx-a100:1")]

    def test_one_rank_takes_no_time_and_says_why(self):
        for collective, algorithm, topology in self.CASES:
            with self.subTest(collective=collective, algorithm=algorithm, topology=topology):
                done = collsim("run", "--topology", topology, "--workers", "1", "--collective", collective,
                               "--algorithm", algorithm, "--size", "16MiB")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertRegex(done.stdout, r"simulated time\s+0 s\n")
                self.assertRegex(done.stdout, r"messages\s+0\n")
                self.assertIn("0 s base latency per collective", done.stdout)
                if collective == "allreduce":
                    self.assertIn("note: one rank: NCCL runs no collective (ncclLaunchOneRank copies the input to the "
                                  "output): no base latency, no message", done.stdout)


class Alltoall(NcclTest):
    """NCCL's alltoall: point to point with PXN (docs/nccl.md#nccl-alltoall)."""

    def test_nccl_runs_alltoall_point_to_point_and_the_nics_bound_it(self):
        done = collsim("run", "--topology", "dgx-h100:2", "--collective", "alltoall", "--algorithm", "nccl",
                       "--size", "1GiB")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("alltoall / nccl-alltoall", done.stdout)
        self.assertIn("note: NCCL runs alltoall point to point (a ncclSend and a ncclRecv per peer, no tuner): 16 p2p "
                      "channels, 2 per peer; each block of 64 MiB on 2 channels with Simple", done.stdout)
        self.assertIn("NCCL's transport for P2P/Simple: 8.4 us base latency", done.stdout)
        self.assertIn("verified        yes", done.stdout)
        busbw = float(re.search(r"busbw\s+([\d.]+) GB/s", done.stdout).group(1))
        # With PXN every block for GPU j of the other node leaves through NIC j: each NIC carries
        # half of a rank's vector, at 400 Gb/s x 4096/4122 (InfiniBand's framing): algbw = 2 x
        # 49.68 GB/s, busbw = algbw x 15/16 (nccl-tests' (n-1)/n)
        nic = 50e9 * 4096 / 4122
        self.assertAlmostEqual(busbw, 2 * nic * 15 / 16 / 1e9, delta=0.01 * busbw)
        # NCCL's maintainer (nccl-tests issue 130): "On 2 nodes ... BusBW = 2x network bandwidth
        # per GPU", 48-49 GB/s per NDR NIC (nccl-tests issue 267): within the targets' 0.8-1.25
        self.assertTrue(0.8 <= busbw / (2 * 48) <= 1.25, busbw)

    def test_the_plan_and_the_messages_follow_ncclS_p2p_channels(self):
        trace = self.traced("--topology", "dgx-h100:2", "--collective", "alltoall", "--algorithm", "nccl",
                            "--size", "64MiB")
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["nccl"], {"algo": "P2P", "proto": "Simple", "channels": 2})
        self.assertEqual(trace["summary"]["message_count"], 16 * 15 * 2)
        # NCCL_MAX_NCHANNELS=1: one p2p channel, every block in one part
        one = self.traced("--topology", "dgx-h100:2", "--collective", "alltoall", "--algorithm", "nccl-alltoall",
                          "--size", "64MiB", "--set", "nccl.channels=1")
        self.assertEqual(one["plan"]["algorithm"]["parameters"]["nccl"]["channels"], 1)
        self.assertEqual(one["summary"]["message_count"], 16 * 15)
        # small blocks travel with LL
        small = self.traced("--topology", "dgx-h100:2", "--collective", "alltoall", "--algorithm", "nccl",
                            "--size", "256KiB")
        self.assertEqual(small["plan"]["algorithm"]["parameters"]["nccl"]["proto"], "LL")


if __name__ == "__main__":
    unittest.main()


class GpuCost(NcclTest):
    """collsim's own algorithms on GPUs run on NCCL's send/recv and pay it (docs/nccl.md#collsims-own-algorithms-on-gpus);
    the sim tests (tests/sim/gpu_cost_test.cpp) check the times by hand, these what a user reads."""

    def test_the_run_says_what_a_gpu_pays_and_gpu_cost_false_leaves_the_links(self):
        done = collsim("run", "--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB")
        self.assertEqual(done.returncode, 0, done.stderr)
        # NCCL_P2P_LL_THRESHOLD 16 KiB x 32 channels per peer on NVLink; Ring's baseLat LL 6.6 us and
        # Simple 8.4 us, hwLat NVLink LL 0.6 us and Simple 3.4 us (tuning.cc 2.25.1)
        self.assertIn("GPUs: ring runs on NCCL's send/recv", done.stdout)
        self.assertIn("a kernel's launch per step, 6.6 us with LL, 8.4 us with Simple", done.stdout)
        self.assertIn("LL up to 512 KiB", done.stdout)
        self.assertIn("hops of 600 ns on NVLink", done.stdout)
        trace = self.traced("--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB",
                            "--set", "nccl.gpu_cost=false")
        self.assertEqual(trace["scenario"]["nccl"], {"pxn": True, "gpu_cost": False})
        # the links alone: 14 hops of 2 x 0.5 us + 128 KiB / 450 GB/s
        self.assertAlmostEqual(trace["summary"]["simulated_time"], 14 * (1e-6 + 131072 / 450e9), delta=1e-12)

    def test_alone_a_launch_per_step_in_training_one_per_collective(self):
        # ring on one DGX H100 at 1 MiB: 14 steps of 128 KiB, LL (within 32 x 16 KiB), each
        # 128 KiB x 2 (LL's line) x 25/20.6 (NCCL's NVLink) / 450 GB/s + hwLat NVLink LL 0.6 us.
        # Alone it is collsim's collective on send/recv: each step a group, a kernel launched
        # once its message is in (Ring's LL baseLat 6.6 us, tuning.cc 2.25.1). In a training
        # iteration it stands in for the framework's ncclAllReduce, one kernel: one launch first,
        # Simple's 8.4 us since the 1 MiB vector is beyond LL's reach (a message's wire bytes are
        # whole, as tests/sim/gpu_cost_test.cpp rounds them)
        step = round(131072 * 2 * 25 / 20.6) / 450e9 + 0.6e-6
        alone = self.traced("--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB")
        self.assertAlmostEqual(alone["summary"]["collective_time"], 14 * (step + 6.6e-6), delta=1e-12)
        done = collsim("run", "--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB",
                       "--set", "training.rounds=2")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("one kernel's launch of 8.4 us per collective (NCCL's Ring baseLat), as NCCL runs the "
                      "collective this training iteration calls", done.stdout)
        trained = self.traced("--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB",
                              "--set", "training.rounds=2")
        self.assertAlmostEqual(trained["summary"]["collective_time"], 8.4e-6 + 14 * step, delta=1e-12)

    def test_nccl_launch_overrides_the_stand_in_rule(self):
        # the same ring (14 steps of 128 KiB with LL, `step` as above), the rule forced both ways:
        # alone as NCCL's collective (one launch first: Simple's 8.4 us, the 1 MiB vector beyond
        # LL's 512 KiB), in training on send/recv alone (a launch per step: LL's 6.6 us each)
        step = round(131072 * 2 * 25 / 20.6) / 450e9 + 0.6e-6
        base = ("--topology", "dgx-h100:1", "--algorithm", "ring", "--size", "1MiB")
        one = self.traced(*base, "--set", "nccl.launch=collective")
        self.assertAlmostEqual(one["summary"]["collective_time"], 8.4e-6 + 14 * step, delta=1e-12)
        self.assertEqual(one["scenario"]["nccl"]["launch"], "collective")
        per_step = self.traced(*base, "--set", "training.rounds=2", "--set", "nccl.launch=step")
        self.assertAlmostEqual(per_step["summary"]["collective_time"], 14 * (step + 6.6e-6), delta=1e-12)
        done = collsim("run", *base, "--set", "nccl.launch=step", "--set", "training.rounds=2")
        self.assertIn("a kernel's launch per step, 6.6 us with LL, 8.4 us with Simple", done.stdout)
        # refused: an unknown value, NCCL's own algorithms, no GPU costs
        self.assert_bad([*base, "--set", "nccl.launch=kernel"], r"nccl\.launch: 'kernel' is not a launch; allowed: collective")
        self.assert_bad(["--topology", "dgx-h100:1", "--algorithm", "nccl-ring", "--size", "1MiB", "--set", "nccl.launch=step"],
                        r"nccl\.launch: it says how often collsim's own algorithms launch a kernel")
        self.assert_bad([*base, "--set", "nccl.gpu_cost=false", "--set", "nccl.launch=step"],
                        r"nccl\.launch: with nccl\.gpu_cost false a GPU pays no launch")

    def test_the_network_row_says_the_transports_latency_not_alpha_0(self):
        # the links carry no latency on GPUs (the transport's hops take their place): the row
        # names NCCL's: Ring hwLat Simple 3.4 us on NVLink, 14 us across nodes, each with the
        # launch of the step that uses the message, baseLat Simple 8.4 us (ring's 4 MiB messages
        # are Simple; tuning.cc 2.25.1); NVLSTree: the 25 us per collective and the hops its
        # transport note states (docs/nccl.md, the workflow)
        cases = [(("--topology", "dgx-h100:2", "--algorithm", "ring", "--size", "64MiB"),
                  "ideal (no latency on the links: NCCL's hop latency 11.8 us to 22.4 us per message, a kernel's "
                  "launch included, instead, B 50 GB/s)"),
                 (("--topology", "dgx-h100:2", "--algorithm", "nccl-nvls-tree", "--size", "64MiB"),
                  "NCCL's hop latency 0 s to 14 us per message and 25 us launch per collective instead"),
                 (("--topology", "star:4", "--algorithm", "ring", "--size", "64MiB"), "ideal (alpha 2 us, B 10 GB/s)")]
        for args, expected in cases:
            with self.subTest(args=args):
                done = collsim("run", *args)
                self.assertEqual(done.returncode, 0, done.stderr)
                row = re.search(r"(?m)^\s+network\s+(.*)$", done.stdout).group(1)
                self.assertIn(expected, row)
                self.assertNotIn("alpha 0 s", row)

    def test_the_lower_bounds_latency_on_gpus_is_the_transports(self):
        # the links carry none: the latency term is the transport's launch + ceil(log2 p) of its
        # least hop (tuning.cc 2.25.1). ring at 8 B on dgx-h100:2 (16 ranks, 4 = ceil(log2 16)):
        # NCCL's send/recv, LL: 4 x (0.6 us NVLink hwLat LL + 6.6 us Ring baseLat LL, the launch
        # of the step that uses the message);
        # NVLSTree: 25 us (its NVLink latency, once) + 4 x 0 s (its NVLink hop is in the launch);
        # a star keeps ceil(log2 4) x alpha 2 us
        cases = [(("--topology", "dgx-h100:2", "--algorithm", "ring", "--size", "8"), 4 * (0.6e-6 + 6.6e-6)),
                 (("--topology", "dgx-h100:2", "--algorithm", "nccl-nvls-tree", "--size", "64MiB"), 25e-6),
                 (("--topology", "star:4", "--algorithm", "ring", "--size", "64MiB"), 2 * 2e-6)]
        for args, latency in cases:
            with self.subTest(args=args):
                trace = self.traced(*args)
                self.assertAlmostEqual(trace["summary"]["lower_bound_latency"], latency, delta=1e-12)

    def test_a_scatter_whose_hops_differ_is_followed_rank_by_rank(self):
        # scatter-allgather broadcast on 2 x 8 A100: a scatter hop across nodes holds its
        # receiver 14 us, one on NVLink 3.4 us (NCCL's send/recv, Simple); in lock step every
        # scatter step waited out the slowest hop of the one before (model 651.234 us against the
        # simulation's 498.234). Followed rank by rank, the model is the simulation, at several
        # sizes and on several GPU platforms (to 1e-5: with 12 ranks the chunks differ by an
        # element, and the model's ring steps carry the largest)
        for topology, size in [("dgx-a100:2:2", "4MiB"), ("dgx-h100:4", "64MiB"), ("rail:3:4", "1MiB")]:
            with self.subTest(topology=topology, size=size):
                trace = self.traced("--topology", topology, "--collective", "broadcast", "--algorithm",
                                    "scatter-allgather", "--size", size)
                summary = trace["summary"]
                self.assertAlmostEqual(summary["model_time"], summary["simulated_time"],
                                       delta=1e-5 * summary["simulated_time"])
        # the binomial trees alike on 3 nodes of 4 GPUs (in lock step: 0.795 of the simulation for
        # the broadcast at 8 B, 0.833 for naive-binomial at 64 KiB)
        for collective, algorithm, size in [("broadcast", "binomial", "8"), ("reduce", "binomial", "64KiB"),
                                            ("allreduce", "naive-binomial", "64KiB")]:
            with self.subTest(algorithm=algorithm, collective=collective):
                summary = self.traced("--topology", "rail:3:4", "--collective", collective, "--algorithm", algorithm,
                                      "--size", size)["summary"]
                self.assertAlmostEqual(summary["model_time"], summary["simulated_time"],
                                       delta=1e-9 * summary["simulated_time"])

    def test_the_hierarchical_note_on_gpus_names_the_transports_latency_not_alpha_0(self):
        # the same for the hierarchical note's two levels: B of NVLink (450 GB/s a GPU, the
        # datasheet) inside a node and of one 400 Gb/s NIC between, latency in NCCL's hops;
        # on a star the links' alpha (2 us) stays
        cases = [(("--topology", "dgx-h100:2"),
                  "inside a group B 450 GB/s (latency: NCCL's hops); between groups B 50 GB/s (latency: NCCL's hops)"),
                 (("--topology", "star:8", "--set", "collective.group_size=4"), "inside a group alpha 2 us, B 10 GB/s")]
        for args, expected in cases:
            with self.subTest(args=args):
                done = collsim("run", *args, "--algorithm", "hierarchical", "--size", "64MiB")
                self.assertEqual(done.returncode, 0, done.stderr)
                note = re.search(r"(?m)^\s+note: hierarchical: (.*)$", done.stdout).group(1)
                self.assertIn(expected, note)
                self.assertEqual("alpha 0 s" in note, False)

    def test_auto_on_one_dgx_h100_at_8_bytes_no_longer_takes_a_free_direct(self):
        # direct used to take 1.0 us (two 0.5 us NVLink hops, no launch); on NCCL's send/recv it pays
        # LL's 6.6 us launch and 0.6 us a hop at least; every other algorithm at least as much
        done = collsim("model", "--algorithm", "all", "--topology", "dgx-h100:1", "--workers", "8", "--size", "8")
        self.assertEqual(done.returncode, 0, done.stderr)
        times = [seconds(t) for t in re.findall(r"(?m)^\s+\d+ \S+(?:, \d+ ch)?\s+([\d.]+ [mun]?s)", done.stdout)]
        self.assertTrue(times, done.stdout)
        self.assertGreaterEqual(min(times), 6.6e-6 + 0.6e-6 - 1e-12, done.stdout)


class ModelSizes(NcclTest):
    def rows(self, *args):
        done = collsim("model", *args)
        self.assertEqual(done.returncode, 0, done.stderr)
        return [line.split() for line in done.stdout.splitlines() if line and not line.startswith("#")]

    def test_model_sizes_on_the_star_is_the_ring_formula_row_by_row(self):
        rows = self.rows("--algorithm", "ring", "--workers", "4", "--bandwidth", "10GBps", "--latency", "1us",
                         "--sizes", "1K:1M:x4")
        self.assertEqual([int(r[0]) for r in rows], [1024, 4096, 16384, 65536, 262144, 1048576])
        for size, count, dtype, time_us, algbw, busbw, variant in rows:
            n = int(size)
            expected = 2 * 3 * 1e-6 + 2 * 3 / 4 * n / 10e9  # 2(p-1) alpha + 2(p-1)/p n/B
            self.assertAlmostEqual(float(time_us), expected * 1e6, places=2)
            self.assertEqual((int(count), dtype, variant), (n // 4, "float32", "ring"))
            self.assertAlmostEqual(float(busbw), float(algbw) * 1.5, delta=0.011)

    def test_every_row_names_the_variant_nccl_and_all_chose(self):
        nccl = self.rows("--algorithm", "nccl", "--topology", "dgx-h100:2", "--workers", "16", "--sizes", "8:8M:x16")
        self.assertEqual(len(nccl), 6)
        for row in nccl:
            self.assertRegex(row[6], r"^nccl-[a-z-]+/(Simple|LL|LL128)/\d+ch$")
        # 8 B across two nodes: NCCL's tree (as the run chooses it: Choice above)
        self.assertTrue(nccl[0][6].startswith("nccl-tree/LL/"), nccl[0])
        every = self.rows("--algorithm", "all", "--topology", "dgx-h100:2", "--workers", "16", "--sizes", "8:8M:x16")
        self.assertEqual(len(every), 6)
        for row, tuned in zip(every, nccl):
            # the fastest of all is at least as fast as NCCL's tuner's choice, by the same model
            self.assertLessEqual(float(row[3]), float(tuned[3]) * (1 + 1e-9), (row, tuned))

    def test_size_and_sizes_together_are_one_error(self):
        done = collsim("model", "--workers", "4", "--bandwidth", "1GBps", "--latency", "1us", "--size", "1M",
                       "--sizes", "1K:1M")
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr.strip(), "collsim: error: --sizes: give --size or --sizes, not both")
