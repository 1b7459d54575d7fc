"""Hostile and absurd input (issue 16): every case must end within seconds with exit 2, one
line "collsim: error: ...", nothing on stdout, nothing written and nothing replaced. Never a
crash, a SimGrid backtrace or a hang. Also: Ctrl-C, sweeps killed with SIGKILL, --resume,
compare's tolerance, engine options.
"""
import json
import os
import re
import resource
import signal
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from test_cli import COLLSIM, REPO, SMALL, CliTest

PLATFORM_HEAD = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
"""
# the sanitizer build (tools/sanitize) is several times slower
SLOW = float(os.environ.get("COLLSIM_SLOWDOWN", "1"))


def deep_array(depth):
    return "[" * depth + "]" * depth


class Hardening(CliTest):
    def assert_refused(self, args, *patterns, timeout=10):
        """assert_bad_input, within `timeout` seconds, and nothing at all left in the folder
        besides the files the test made."""
        before = sorted(p.name for p in self.tmp.iterdir())
        line = self.assert_bad_input(args, *patterns, timeout=timeout * SLOW)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), before, line)
        return line


class Sizes(Hardening):
    def test_sizes_that_overflow_or_vanish(self):
        for size, word in [("18446744073709555712", "too large"), ("1e308", "too large"), ("4.9e-324", "too small"),
                           ("2PiB", "unknown unit"), ("nan", "not a size"), ("-4", "negative"), ("inf", "not a size")]:
            with self.subTest(size=size):
                self.assert_refused(["run", "--size", size], "collective.size", word)

    def test_scenario_numbers_go_through_the_same_checks(self):
        for field, value, word in [("collective.size", 1e300, "too large"), ("collective.size", 5e-324, "too small"),
                                   ("collective.segment", 1e30, "too large"),
                                   ("training.compute", 1e9, "too large"), ("message_overhead", 1e-300, "too small")]:
            with self.subTest(field=field, value=value):
                section, _, key = field.rpartition(".")
                document = {section: {key: value}} if section else {key: value}
                self.assert_refused(["run", self.scenario(document)], field, word)

    def test_generator_bandwidths_and_latencies(self):
        for topology, word in [("star:4:0Bps", "must be > 0"), ("star:4:1e-300Bps", "too small"),
                               ("star:4:1e300GBps", "too large"), ("star:4:10GBps:-1us", "negative"),
                               ("star:4:10GBps:1e7s", "too large"), ("star:4:10GBps:nanus", "not a time"),
                               ("nodes:2:2:10GBps:1e-320Bps", "too small")]:
            with self.subTest(topology=topology):
                self.assert_refused(["run", "--topology", topology], "topology", word)

    def test_model_flags(self):
        flags = {"--workers": "8", "--size": "1GiB", "--bandwidth": "10GBps", "--latency": "1us"}
        for flag, value, word in [("--workers", "1073741825", "1 to 1000000"), ("--bandwidth", "nanGBps", "not a"),
                                  ("--latency", "1e9s", "too large"), ("--size", "1e400", "not a size"),
                                  ("--segment", "5e-324", "too small"), ("--overhead", "-1us", "negative")]:
            with self.subTest(flag=flag):
                args = {**flags, flag: value}
                self.assert_refused(["model", *[x for pair in args.items() for x in pair]], flag, word)

    def test_a_terabyte_runs_with_a_plan(self):
        out = self.assert_ok("run", "--size", "1TiB", "--workers", "8", "--topology", "star:8")
        self.assertIn("memory holds", out)


class Outputs(Hardening):
    def test_an_output_never_replaces_an_input(self):
        scenario = self.scenario({"workers": 4, "topology": "star:4"})
        original = scenario.read_bytes()
        for option in ["--trace", "--svg", "--html", "--perfetto"]:
            with self.subTest(option=option):
                done = self.collsim("run", scenario, option, scenario)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertRegex(done.stderr, f"^collsim: error: {option}: .*one of the run's inputs")
                self.assertEqual(len(done.stderr.splitlines()), 1)
                self.assertEqual(scenario.read_bytes(), original)
        platform = self.write("p.xml", PLATFORM_HEAD + '<cluster id="c" prefix="n" suffix="" radical="0-3" '
                              'speed="1Gf" bw="1GBps" lat="1us"/></platform>')
        before = platform.read_bytes()
        done = self.collsim("run", "--topology", platform, "--trace", platform)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(platform.read_bytes(), before)
        trace = self.tmp / "t.json"
        self.assert_ok("run", *SMALL, "--trace", trace, "-q")
        done = self.collsim("render", trace, "--svg", trace)
        self.assertEqual(done.returncode, 2, done.stderr)
        json.loads(trace.read_text())

    def test_fifo_and_device_outputs_are_refused_and_stay(self):
        fifo = self.tmp / "fifo"
        os.mkfifo(fifo)
        for target, kind in [(fifo, "FIFO"), ("/dev/null", "character device")]:
            with self.subTest(target=target):
                done = self.collsim("run", *SMALL, "--trace", target)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(kind, done.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_a_symlink_is_written_through(self):
        real = self.tmp / "real.json"
        real.write_text("old")
        link = self.tmp / "link.json"
        link.symlink_to(real)
        self.assert_ok("run", *SMALL, "--trace", link, "-q")
        self.assertTrue(link.is_symlink())
        self.assertEqual(json.loads(real.read_text())["format"], "collsim-trace/2")

    def test_a_bad_later_output_leaves_no_earlier_one(self):
        blocker = self.write("file", "x")
        for option, path in [("--svg", blocker / "x.svg"), ("--html", self.tmp / ("h" * 300 + ".html")),
                             ("--perfetto", self.tmp)]:
            with self.subTest(option=option):
                done = self.collsim("run", *SMALL, "--trace", self.tmp / "t.json", option, path)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertRegex(done.stderr, f"^collsim: error: {option}: ")
                self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["file"])

    def test_outputs_are_checked_before_simulating(self):
        # p = 2048 would take many seconds: the refusal must come first
        blocker = self.write("file", "x")
        started = time.monotonic()
        self.assert_refused(["run", "--topology", "star:2048", "--svg", blocker / "x.svg"], "--svg")
        self.assertLess(time.monotonic() - started, 5 * SLOW)


class Json(Hardening):
    def test_deep_json_in_every_input(self):
        deep = self.write("deep.json", '{"name": ' + deep_array(100000) + "}")
        self.assert_refused(["run", deep], "deep.json", "nested deeper than 64")
        self.assert_refused(["validate", deep], "nested deeper than 64")
        self.assert_refused(["render", deep, "--svg", self.tmp / "x.svg"], "nested deeper than 64")
        self.assert_refused(["compare", deep, deep], "nested deeper than 64")
        self.assert_refused(["sweep", deep, "--out", self.tmp / "r.csv"], "nested deeper than 64")

    def test_number_overflow_names_file_place_and_reason(self):
        big = self.scenario({"collective": {"size": 1}}).read_text().replace("1", "1e400")
        path = self.write("big.json", big)
        self.assert_refused(["run", path], "big.json", r"at collective\.size", "number overflow")
        listing = self.write("list.json", '[{"simulated_time": 1}, {"simulated_time": 1e999}]')
        self.assert_refused(["compare", listing, listing], "list.json", r"\[1\]\.simulated_time", "overflow")


class Scenarios(Hardening):
    def test_fifo_and_device_scenarios_are_refused(self):
        fifo = self.tmp / "s.fifo"
        os.mkfifo(fifo)
        self.assert_refused(["run", fifo], "FIFO")
        self.assert_refused(["run", "/dev/zero"], "character device")
        self.assert_refused(["run", self.tmp], "folder")

    def test_fault_host_names(self):
        for host, word in [("", "empty"), ("host 1", "space"), ("a\tb", "space")]:
            with self.subTest(host=host):
                document = {"workers": 4, "topology": "star:4",
                            "faults": [{"kind": "slow-host", "at": 0, "host": host, "factor": 0.5}]}
                self.assert_refused(["run", self.scenario(document)], r"faults\.0\.host", word)
        twice = {"workers": 4, "topology": "star:4", "recovery": {"policy": "rebuild", "timeout": "3x"},
                 "faults": [{"kind": "preempt", "at": 0, "rank": 1}, {"kind": "preempt", "at": 0.001, "rank": 1}]}
        self.assert_refused(["run", self.scenario(twice)], r"faults\.1", "preempted by an earlier fault")

    def test_empty_name_and_placement(self):
        # an empty name would be the trace's identity in compare and the pictures' title
        for name, word in [("", "empty"), ("a\nb", "control character")]:
            with self.subTest(name=name):
                document = {"name": name, "workers": 4, "topology": "star:4"}
                self.assert_refused(["run", self.scenario(document)], r"^collsim: error: name: ", word)
        document = {"workers": 4, "topology": "star:4", "placement": []}
        self.assert_refused(["run", self.scenario(document)], r"placement: the list is empty")

    def test_absurd_fault_factors_and_timeouts(self):
        for factor in [5e-324, 1e-300, 1e300, 0]:
            with self.subTest(factor=factor):
                document = {"workers": 4, "topology": "star:4",
                            "faults": [{"kind": "slow-link", "at": 0, "rank": 0, "factor": factor}]}
                self.assert_refused(["run", self.scenario(document)], r"faults\.0\.factor", "1e-06 to 1e\+06")
        for timeout in ["1e-300x", "1e300x", "nanx"]:
            with self.subTest(timeout=timeout):
                document = {"workers": 4, "topology": "star:4", "recovery": {"policy": "rebuild", "timeout": timeout}}
                self.assert_refused(["run", self.scenario(document)], "recovery.timeout")

    def test_contexts_nthreads_is_refused(self):
        self.assert_refused(["run", *SMALL, "--cfg", "contexts/nthreads:2"], "contexts/nthreads", "one at a time")
        self.assert_refused(["run", self.scenario({"cfg": ["contexts/nthreads:4"]})], r"cfg\.0", "nthreads")

    def test_context_factory_really_applies(self):
        """With the thread factory every rank is a thread of the process; with SimGrid's
        default raw contexts there is one thread."""
        def most_threads(*cfg):
            run = subprocess.Popen([COLLSIM, "run", "--topology", "star:64", "--set", "training.rounds=40", "-q", *cfg],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            most = 0
            while run.poll() is None:
                try:
                    most = max(most, len(os.listdir(f"/proc/{run.pid}/task")))
                except FileNotFoundError:
                    break
                time.sleep(0.01)
            self.assertEqual(run.wait(), 0, run.stderr.read())
            return most
        self.assertGreaterEqual(most_threads("--cfg", "contexts/factory:thread"), 64)
        if os.environ.get("COLLSIM_SANITIZED"):
            return  # a sanitizer build's default is thread contexts (tools/sanitize)
        self.assertEqual(most_threads(), 1)


class Limits(Hardening):
    """Refused at once, before anything is built (README "Limits")."""

    def test_platforms_too_large_to_build(self):
        for topology in ["star:1000000", "nodes:1000:1000", "torus:300x300", "fat-tree:2:300,300:1,300:1,1",
                         "dragonfly:100:100:100"]:
            with self.subTest(topology=topology):
                self.assert_refused(["run", "--topology", topology], "topology", "at most 65536", timeout=5)
        radical = self.write("big.xml", PLATFORM_HEAD + '<cluster id="c" prefix="n" suffix="" radical="0-99999999" '
                             'speed="1Gf" bw="1GBps" lat="1us"/></platform>')
        self.assert_refused(["run", "--topology", radical], "100000000 hosts", timeout=5)

    def test_runs_with_too_many_messages_or_too_much_memory(self):
        self.assert_refused(["run", "--topology", "star:16", "--set", "training.rounds=1000000"], "messages",
                            timeout=5)
        self.assert_refused(["run", "--topology", "star:65536"], "messages", timeout=5)
        self.assert_refused(["run", "--topology", "star:4", "--set", "collective.carried_elements=4294967296", "--size",
                             "1TiB"],
                            "carried_elements", "GiB of buffers", timeout=5)

    def test_the_default_carry_past_the_buffers_limit_names_its_cause_and_a_count(self):
        # 7e9 bfloat16 parameters in 534 equal layers, each a 25 MiB bucket, on 1024 ranks with 8
        # channels: every bucket's 8192 chunks get an element (plan/payload.hpp): per bucket the
        # fewest carried elements that leave no chunk of L // 8192 logical elements without one
        layer = 7_000_000_000 // 534
        per_bucket = min(layer, -(-layer // (layer // 8192)))
        args = ["--topology", "star:1024", "--channels", "8", "--set", "collective.dtype=bfloat16",
                "--set", "training.layers.uniform.count=534", "--set", f"training.layers.uniform.parameters={layer * 534}",
                "--set", "training.layers.uniform.forward=1s", "--set", "training.layers.uniform.backward=2s",
                "--set", "training.bucket=25MiB", "--set", "training.replay=true"]
        # ZeRO-2 holds every bucket's data for the whole run (the step needs every reduced shard):
        # 2 copies x 1024 ranks x 534 x per_bucket bfloat16 elements pass 8 GiB
        zero2 = [*args, "--set", "training.sharding=zero2"]
        line = self.assert_refused(
            ["run", *zero2],
            re.escape("giving each of the 8192 chunks (1024 x 8 channels) of each of the 534 buckets an element takes "
                      f"{534 * per_bucket} elements per rank"),
            re.escape("(every bucket held for the whole run: training.sharding zero2 needs it)"),
            re.escape("fewer buckets (a larger training.bucket)"), r"set collective\.carried_elements=\d+ ", timeout=20)
        self.assertNotIn("collective.carried_elements:", line)
        # the count it suggests: a whole number per bucket, accepted, and near the limit (a
        # fifth more is refused)
        suggested = int(re.search(r"carried_elements=(\d+)", line).group(1))
        self.assertEqual(suggested % 534, 0)
        done = self.collsim("validate", *zero2, "--set", f"collective.carried_elements={suggested}", timeout=60 * SLOW)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assert_refused(["run", *zero2, "--set", f"collective.carried_elements={suggested * 6 // 5}"],
                            "collective.carried_elements: ", "GiB of buffers", timeout=20)
        # Without sharding each bucket's data exists only while its collective runs: the same
        # default carry is accepted (3 x 1024 x per_bucket elements held at once)
        plan = json.loads(self.assert_ok("validate", "--plan", *args))
        self.assertTrue(plan["training"]["buckets_in_flight"])
        self.assertEqual({b["carried_elements"] for b in plan["training"]["buckets"]}, {per_bucket})
        self.assertEqual(plan["payload"]["carried_elements"], 534 * per_bucket)

    def test_the_limit_counts_each_algorithms_own_messages(self):
        # ring allreduce: 2 p (p - 1) messages; 16384 ranks send 536,805,376, over the limit
        line = self.assert_refused(["run", "--topology", "star:16384", "--algorithm", "ring"], "messages", timeout=5)
        self.assertIn(f"sends {2 * 16384 * 16383:.3g} messages", line)
        # times the rounds: one round at p = 4096 fits, ten do not
        line = self.assert_refused(["run", "--topology", "star:4096", "--set", "training.rounds=10"], "messages",
                                   timeout=5)
        self.assertIn(f"sends {10 * 2 * 4096 * 4095:.3g} messages", line)
        # ... while p = 8192 ring (1.3e8 messages) and a binomial broadcast over 16384 ranks fit
        for args in (["--topology", "star:8192", "--algorithm", "ring"],
                     ["--topology", "star:16384", "--collective", "broadcast", "--algorithm", "binomial"]):
            with self.subTest(args=args):
                done = self.collsim("validate", *args, timeout=60 * SLOW)
                self.assertEqual(done.returncode, 0, done.stderr)
        # direct allreduce: every rank holds p - 1 incoming vectors, of 4096 elements at p = 1024 when the
        # scenario asks for them (left to collsim, the budget is shared among them: see below)
        self.assert_refused(["run", "--topology", "star:1024", "--algorithm", "direct", "--set",
                             "collective.carried_elements=4096"], "direct allreduce",
                            f"{(2 * 1024 + 1024 * 1023) * 4096 * 4 / 2**30:.4g} GiB of buffers", timeout=5)

    def test_transfers_posted_at_once_are_limited(self):
        # direct posts p (p - 1) transfers at once, each about 2.8 KB of SimGrid's state until it
        # ends: 2000 ranks fit under 4e6 (3,998,000), 2048 do not (4,192,256); 16384 ranks were
        # accepted (2.7e8 messages < 3e8) and ran out of memory before this limit
        for collective, p in (("alltoall", 2048), ("alltoall", 16384), ("allreduce", 4096)):
            with self.subTest(collective=collective, p=p):
                line = self.assert_refused(["run", "--topology", f"star:{p}", "--collective", collective,
                                            "--algorithm", "direct", "--size", "1MiB"], "in flight at once", timeout=20)
                self.assertIn(f"has {p * (p - 1):.3g} transfers in flight at once", line)
        # NCCL's alltoall posts a send per peer and p2p part at once (1 part with one channel)
        line = self.assert_refused(["run", "--topology", "dgx-h100:256", "--collective", "alltoall", "--algorithm",
                                    "nccl-alltoall", "--set", "nccl.channels=1", "--size", "1MiB"],
                                   "in flight at once", timeout=20)
        self.assertIn(f"has {2048 * 2047:.3g} transfers", line)
        # NCCL's tree posts every receive of every chunk at once: one chunk per lane each way on
        # each of the p - 1 tree edges and its bodies, 4 (p - 1) x 32 lanes at 32768 ranks
        # (4,194,176); its 250,000-message budget below that (it used to count 0 here)
        line = self.assert_refused(["run", "--topology", "dgx-h100:4096", "--algorithm", "nccl-tree", "--set",
                                    "nccl.channels=32", "--size", "1GiB"], "in flight at once", timeout=20)
        self.assertIn(f"has {4 * 32767 * 32:.3g} transfers in flight at once", line)
        # at 2000 ranks direct fits (3,998,000 at once)
        done = self.collsim("validate", "--topology", "star:2000", "--collective", "alltoall", "--algorithm", "direct",
                            timeout=60 * SLOW)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_the_direct_allreduce_shares_the_carried_budget_among_the_vectors_it_holds(self):
        # each rank holds p - 1 peers' vectors: 2^20 elements / p / (p - 1) each, whole, of 1 GiB each
        for p in (64, 200):
            with self.subTest(p=p):
                trace = self.tmp / f"direct-{p}.json"
                done = self.collsim("run", "--topology", f"star:{p}", "--algorithm", "direct", "--size", "1GiB",
                                    "--quiet", "--trace", str(trace), timeout=120 * SLOW)
                self.assertEqual(done.returncode, 0, done.stderr)
                data = json.loads(trace.read_text())
                self.assertEqual(data["payload"]["carried_elements"], int(2**20 // p / (p - 1)))
                self.assertTrue(data["summary"]["verified"])
                # the network still carries 1 GiB per message: alpha + (p - 1) n / B on a star of private links
                messages = data["message_sample"]["messages"] if "message_sample" in data else data["messages"]
                self.assertEqual({m["bytes"] for m in messages}, {2**30})

    @unittest.skipIf(SLOW > 1, "a sanitizer build reserves address space of its own")
    def test_out_of_memory_is_an_error_line(self):
        def limit_memory():
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        args = [COLLSIM, "run", "--topology", "star:4", "--size", "4GiB", "--set",
                "collective.carried_elements=67108864", "--trace", self.tmp / "t.json"]
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, preexec_fn=limit_memory)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertRegex(done.stderr, r"^collsim: error: out of memory.*\n$")
        self.assertEqual(list(self.tmp.iterdir()), [])


class Platforms(Hardening):
    def platform(self, body):
        return self.write("p.xml", PLATFORM_HEAD + body + "\n</platform>\n")

    def test_platforms_simgrid_would_crash_on(self):
        full = '<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>{}</zone>'
        route = '<link id="l" bandwidth="{}" latency="1us"/><route src="a" dst="b"><link_ctn id="l"/></route>'
        cases = [("", "no hosts"),
                 ('<zone id="z" routing="Dijkstra"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone>',
                  "zone 'z' .*no link"),
                 (full.format(route.format("0Bps")), 'line 4: <link> bandwidth="0Bps"'),
                 (full.format(route.format("nanBps")), "finite, positive"),
                 (full.format(route.format("1e-320Bps")), "finite, positive"),
                 ('<zone id="z" routing="Full"><host id="a" speed="0f"/></zone>', 'speed="0f"'),
                 ('<zone id="z" routing="Full" <host/></zone>', "malformed attribute"),
                 ("<zone id='a' routing='Full'>" * 1000 + "<host id='h' speed='1Gf'/>" + "</zone>" * 1000,
                  "nested deeper than 32")]
        for body, pattern in cases:
            with self.subTest(pattern=pattern):
                self.assert_refused(["run", "--workers", "1", "--topology", self.platform(body)], "topology", pattern)


    CLUSTER = '<cluster id="c" prefix="h-" suffix="" radical="{radical}" speed="{speed}" bw="{bw}" lat="1us"{extra}/>'

    def cluster(self, radical="0-3", speed="1Gf", bw="1GBps", extra=""):
        return self.platform(self.CLUSTER.format(radical=radical, speed=speed, bw=bw, extra=extra))

    def test_config_props_go_through_the_engine_options_allow_list(self):
        # a platform's <config> is --cfg by another route: the same refusals, the input intact
        scenario = self.tmp / "s.json"
        for prop, pattern in [('id="tracing/filename" value="{}"'.format(scenario), "tracing/filename is refused"),
                              ('id="tracing" value="yes"', "tracing is refused"),
                              ('id="contexts/nthreads" value="4"', "one at a time"),
                              ('id="debug/breakpoint" value="0.000001"', "'debug/breakpoint' is not an engine option"),
                              ('id="surf/precision" value="0"', "surf/precision: 0 is out of range"),
                              ('id="network/bandwidth-factor" value="0"', "bandwidth-factor: 0 is out of range"),
                              ('id="contexts/stack-size" value="1"', "stack-size: 1 is out of range"),
                              ('id="network/model" value="ns-3"', "'ns-3' is not a valid network/model")]:
            body = f'<config><prop {prop}/><prop id="tracing" value="yes"/></config>' if "filename" in prop else \
                f"<config><prop {prop}/></config>"
            xml = self.platform(body + self.CLUSTER.format(radical="0-3", speed="1Gf", bw="1GBps", extra=""))
            scenario.write_text(json.dumps({"topology": str(xml), "workers": 4}))
            for command in "validate", "run":
                with self.subTest(prop=prop, command=command):
                    self.assert_refused([command, scenario], r"p\.xml' line 4: <config> <prop>", pattern)
                    self.assertEqual(json.loads(scenario.read_text())["workers"], 4)

    def test_engine_options_outside_the_allow_list_are_refused(self):
        for option, pattern in [("debug/breakpoint:0.000001", "'debug/breakpoint' is not an engine option collsim "
                                                              "accepts; allowed: contexts/factory"),
                                ("surf/precision:inf", "'inf' is not a finite number"),
                                ("network/TCP-gamma:nan", "'nan' is not a finite number"),
                                ("contexts/stack-size:1e12", "out of range; allowed: above 15 to 1048576"),
                                ("network/crosstraffic:maybe", "'maybe' is not a valid network/crosstraffic")]:
            with self.subTest(option=option):
                self.assert_refused(["run", *SMALL, "--cfg", option], "--cfg", pattern)

    def test_values_simgrid_would_choke_on(self):
        cases = [(dict(radical="0-99999999999999999999"), "numbers a host beyond 2147483647"),
                 (dict(radical="0-2147483648"), "numbers a host beyond"),
                 (dict(extra=' sharing_policy="WIFI"'), 'sharing_policy="WIFI" is not supported; allowed: SHARED'),
                 (dict(bw="1e308GBps"), r'bw="1e308GBps" is too large; at most 1e\+15 B/s'),
                 (dict(bw="8008Tbps"), r'bw="8008Tbps" is too large'),
                 (dict(bw="2EBps"), r'bw="2EBps" is too large'),
                 (dict(speed="1e308Gf"), r'speed="1e308Gf" is too large; at most 1e\+18 flop/s')]
        for fields, pattern in cases:
            with self.subTest(pattern=pattern):
                self.assert_refused(["validate", self.scenario({"topology": str(self.cluster(**fields)), "workers": 4})],
                                    "topology", pattern)
        # the largest values allowed still run: 1 PB/s links (8 Pbps), 1 Ef hosts
        done = self.collsim("run", "-q", "--workers", "4", "--topology", self.cluster(bw="1PBps", speed="1000Pf"))
        self.assertEqual(done.returncode, 0, done.stderr)


def start_simulating(args):
    """Starts `collsim run ARGS --progress` and returns once it says it simulates (its first
    progress line): an event, never a guess of how long reading the input takes."""
    run = subprocess.Popen([COLLSIM, "run", *args, "--progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    first = run.stderr.readline()
    if not first.startswith("collsim: simulating "):
        run.kill()
        raise AssertionError(f"the run did not start simulating: {first}{run.stderr.read()}")
    return run


class Crashes(Hardening):
    def test_a_crash_is_an_internal_error_never_the_inputs(self):
        # a real crash cannot be provoked from valid input (each one found is fixed): deliver
        # the signals a crash raises, while the run simulates (50 rounds: it is still simulating)
        for sig in signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE:
            with self.subTest(signal=sig):
                run = start_simulating(["--topology", "star:512", "--size", "64MiB", "--set", "training.rounds=50"])
                run.send_signal(sig)
                _, stderr = run.communicate(timeout=30 * SLOW)
                self.assertEqual(run.returncode, 1, stderr)
                [line] = [line for line in stderr.splitlines() if not line.startswith("collsim: round ")]
                self.assertRegex(line, r"^collsim: internal error: .*\(SIG(SEGV|BUS|FPE)\) while simulating "
                                       r"\(.* on 'star:512'\); this is a bug, not a problem of the input")
                self.assertNotIn("platform", line)


class Signals(Hardening):
    def test_interrupted_run_exits_130_and_leaves_nothing(self):
        for sig, status in [(signal.SIGINT, 130), (signal.SIGTERM, 143)]:
            with self.subTest(signal=sig):
                run = start_simulating(["--topology", "star:512", "--size", "64MiB", "--set", "training.rounds=50",
                                        "--trace", str(self.tmp / "t.json")])
                run.send_signal(sig)
                _, stderr = run.communicate(timeout=30 * SLOW)
                self.assertEqual(run.returncode, status, stderr)
                self.assertNotIn("EngineImpl", stderr)
                self.assertEqual(list(self.tmp.iterdir()), [])

    def children_of(self, pid):
        found = []
        for task in Path("/proc").glob("[0-9]*"):
            try:
                if int((task / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(task.name))
            except (OSError, ValueError, IndexError):
                pass
        return found

    def test_sweep_points_die_with_a_killed_sweep(self):
        document = {"base": {"topology": "star:256", "collective": {"size": "64MiB"}, "training": {"rounds": 50}},
                    "axes": {"seed": [1, 2, 3, 4]}}
        path = self.write("slow.json", json.dumps(document))
        sweep = subprocess.Popen([COLLSIM, "sweep", path, "--out", self.tmp / "r.csv", "--jobs", "2", "-q"])
        children = []
        deadline = time.monotonic() + 30 * SLOW  # waits for the event (two points running), bounded
        while time.monotonic() < deadline:
            children = self.children_of(sweep.pid)
            if len(children) == 2:
                break
            time.sleep(0.02)
        self.assertEqual(len(children), 2)
        sweep.kill()
        sweep.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(Path(f"/proc/{c}").exists() and
                                                  "Z" not in (Path(f"/proc/{c}/stat").read_text().split()[2:3] or [""])
                                                  for c in children):
            time.sleep(0.05)
        alive = [c for c in children if Path(f"/proc/{c}").exists() and (Path(f"/proc/{c}/stat").read_text().split()[2] != "Z")]
        self.assertEqual(alive, [])

    def test_resume_refuses_another_sweeps_table_and_removes_stale_temporaries(self):
        first = self.write("a.json", json.dumps({"base": {"topology": "star:4"}, "axes": {"workers": [2, 4]}}))
        other = self.write("b.json", json.dumps({"base": {"topology": "star:4"}, "axes": {"seed": [7, 8]}}))
        out = self.tmp / "r.csv"
        self.assert_ok("sweep", first, "--out", out, "-q")
        table = out.read_text()
        done = self.collsim("sweep", other, "--out", out, "--resume", "-q")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertRegex(done.stderr, r"^collsim: error: --resume: .*another sweep")
        self.assertEqual(out.read_text(), table)
        stale = self.tmp / "r.csv.tmp.999999999"
        stale.write_text("half")
        self.assert_ok("sweep", first, "--out", out, "--resume", "-q")
        self.assertFalse(stale.exists())


class Compare(Hardening):
    def baseline(self, name, seconds):
        folder = self.tmp / name
        folder.mkdir(exist_ok=True)
        (folder / "b.json").write_text(json.dumps({"format": "collsim-baseline/1", "identity": "x",
                                                   "metrics": {"simulated_time": seconds}}))
        return folder

    def test_tolerance_forms(self):
        old, new = self.baseline("old", 1.0), self.baseline("new", 1.04)  # 4% slower
        for tolerance, status in [("5%", 0), ("0.05", 0), ("3%", 1), ("0.03", 1), ("simulated_time=5%", 0)]:
            with self.subTest(tolerance=tolerance):
                done = self.collsim("compare", old, new, "--tolerance", tolerance)
                self.assertEqual(done.returncode, status, done.stdout + done.stderr)
        for tolerance, word in [("nan", "not a tolerance"), ("inf", "not a tolerance"), ("5", "ambiguous"),
                                ("0x1p-4", "not a tolerance"), ("-1%", "not a tolerance"), ("nan%", "not a tolerance")]:
            with self.subTest(tolerance=tolerance):
                self.assert_refused(["compare", old, new, "--tolerance", tolerance], "--tolerance", word)

    def test_table_cells_that_are_not_finite_numbers(self):
        good = self.write("a.csv", "point,workers,simulated_time\n0,2,1.0\n")
        for cell in ["nan", "inf", "1e999", "0.5x", "0x1p-1"]:
            with self.subTest(cell=cell):
                bad = self.write("b.csv", f"point,workers,simulated_time\n0,2,{cell}\n")
                self.assert_refused(["compare", good, bad], "b.csv", "simulated_time", "not a finite number")

    def test_two_empty_folders(self):
        (self.tmp / "a").mkdir()
        (self.tmp / "b").mkdir()
        self.assert_refused(["compare", self.tmp / "a", self.tmp / "b"], "nothing to compare")


class Classes(Hardening):
    """Classes found by a re-probe of every item (issue 16)."""

    def test_user_text_with_control_characters_stays_one_line(self):
        for args in [["run", *SMALL, "--algorithm", "ring\n"], ["run", *SMALL, "--dtype", "f\r32"],
                     ["run", self.scenario({"workers": 4, "topology": "star:4", "placement": ["n0\n", "a", "b", "c"]})]]:
            with self.subTest(args=args[-1]):
                line = self.assert_refused(args)
                self.assertIn("\\", line)

    def test_an_empty_value_is_not_a_left_out_flag(self):
        for flag in ["--size", "--workers", "--algorithm", "--svg", "--network", "--cfg", "--set"]:
            with self.subTest(flag=flag):
                self.assert_refused(["run", "--topology", "star:4", flag, ""], flag, "empty")
        done = self.collsim("run", *SMALL, "--trace", "")
        self.assertEqual((done.returncode, done.stdout), (2, ""), done.stderr)
        self.assertRegex(done.stderr, "^collsim: error: --trace: the value is empty\n$")
        self.assert_refused(["run", *SMALL, "--sizes", "1KiB:4KiB:x2", "--jobs", "-1"], "--jobs")

    def test_two_outputs_naming_one_file_are_refused_before_the_run(self):
        for first, second in [("--svg", "--html"), ("--html", "--perfetto")]:
            with self.subTest(options=(first, second)):
                self.assert_refused(["run", *SMALL, first, self.tmp / "x", second, self.tmp / "x"], second,
                                    "also the file of " + first)
        sweep = self.write("w.json", json.dumps({"base": {"topology": "star:4"}, "axes": {"workers": [2, 4]}}))
        self.assert_refused(["sweep", sweep, "--out", self.tmp / "r.svg", "--plot", self.tmp / "r.svg", "-q"],
                            "--plot", "also the file of --out")

    def test_simgrid_tracing_cannot_write_files(self):
        scenario = self.scenario({"workers": 4, "topology": "star:4"})
        for cfg in ["tracing:yes", f"tracing/filename:{scenario}"]:
            with self.subTest(cfg=cfg):
                self.assert_refused(["run", scenario, "--cfg", cfg], "tracing", "--trace")

    def test_a_key_given_twice(self):
        path = self.write("s.json", '{"workers": 4, "collective": {"size": 4096, "size": 8192}}')
        self.assert_refused(["run", path], "s.json", r"given twice at collective\.size")

    def test_sweep_axes_and_ranges(self):
        every = {"from": 1, "to": 65536, "step": 1}
        cases = [({"workers": every, "seed": every, "collective.root": every, "training.rounds": every},
                  "1.845e\\+19 points is too many"),  # 2^64: a size_t product wraps to 0
                 ({"seed": {"from": 1, "to": 1e300, "step": 1}}, "more than 100000 values"),
                 ({"seed": {"from": 1, "to": 4, "step": 5e-324}}, "too small to move")]
        for axes, pattern in cases:
            with self.subTest(pattern=pattern):
                sweep = self.write("w.json", json.dumps({"base": {"topology": "star:4"}, "axes": axes}))
                self.assert_refused(["sweep", sweep, "--out", self.tmp / "r.csv"], "axes", pattern)
        sweep = self.write("w.json", json.dumps({"name": 5, "base": {"topology": "star:4"}, "axes": {"seed": [1]}}))
        self.assert_refused(["sweep", sweep, "--plan"], "name", "non-empty string")

    def test_a_plot_that_cannot_be_drawn_is_refused_before_the_points_run(self):
        sweep = self.write("w.json", json.dumps({"base": {"topology": "star:4"}, "axes": {"seed": [1]}}))
        self.assert_refused(["sweep", sweep, "--out", self.tmp / "r.csv", "--plot", self.tmp / "r.svg", "-q"],
                            "--x", "no numeric axis")

    def test_merging_no_points(self):
        part = self.write("p.json", "[]")
        self.assert_refused(["sweep", "merge", part, "--out", self.tmp / "m.json"], "no points")

    def test_baselines_never_replace_the_scenarios(self):
        folder = self.tmp / "sc"
        folder.mkdir()
        scenario = folder / "a.json"
        scenario.write_text(json.dumps({"workers": 2, "topology": "star:2", "collective": {"size": 4096}}))
        before = scenario.read_text()
        self.assert_refused(["baseline", "update", "--scenarios", folder, "--out", folder, "-q"], "--out",
                            "one of the scenarios")
        self.assertEqual(scenario.read_text(), before)

    def test_baseline_files_with_odd_metrics(self):
        good = {"format": "collsim-baseline/1", "identity": "x", "metrics": {"simulated_time": 1.0}}
        for change, pattern in [({"metrics": {"simulated_time": "nan"}}, "simulated_time is \"nan\""),
                                ({"metrics": 5}, "not an object"), ({"identity": 5}, "identity is 5"),
                                ({"identity": None}, "identity is null")]:
            with self.subTest(change=change):
                old, new = self.tmp / "old", self.tmp / "new"
                for folder, document in [(old, good), (new, {**good, **change})]:
                    folder.mkdir(exist_ok=True)
                    (folder / "b.json").write_text(json.dumps(document))
                self.assert_refused(["compare", old, new], pattern)
        (new / "b.json").write_text(json.dumps({"format": "collsim-baseline/1", "metrics": {}}))
        self.assert_refused(["compare", old, new], 'without "identity"')

    def test_layers_whose_gradient_is_too_large(self):
        # 20000 x 2^50 parameters would also overflow a 64-bit count
        for layers, count in [({"uniform": {"count": 100000, "parameters": 2 ** 50}}, 2 ** 50),
                              ([{"parameters": 2 ** 50}] * 20000, 20000 * 2 ** 50)]:
            with self.subTest(count=count):
                document = {"workers": 4, "topology": "star:4", "training": {"layers": layers}}
                self.assert_refused(["run", self.scenario(document)], "training.layers",
                                    re.escape(f"{count:.4g} parameters of 4 bytes make a {4 * count:.4g}-byte"),
                                    "at most 1 PiB")
        document = {"workers": 4, "topology": "star:4", "training": {"layers": [{"parameters": 4, "name": ""}]}}
        self.assert_refused(["run", self.scenario(document)], r"training\.layers\.0\.name", "empty")

    def test_integers_beyond_their_type(self):
        for key, value in [("recovery.min_workers", 2 ** 32 + 1), ("workers", 2 ** 64 - 1), ("seed", -1)]:
            with self.subTest(key=key):
                section, _, name = key.rpartition(".")
                document = {"topology": "star:4", **({section: {name: value}} if section else {name: value})}
                self.assert_refused(["run", self.scenario(document)], key)
        trace = self.tmp / "t.json"
        self.assert_ok("run", *SMALL, "--trace", trace, "-q")
        document = json.loads(trace.read_text())
        document["messages"][0]["src"] = 2 ** 32 + 1  # would wrap to rank 1
        trace.write_text(json.dumps(document))
        self.assert_refused(["render", trace, "--svg", self.tmp / "x.svg"], r"messages\[0\]\.src", "32 bits")


class MoreClasses(Hardening):
    def test_hexadecimal_numbers_are_not_sizes(self):
        for flag, value in [("--size", "0x10"), ("--reduce-bandwidth", "0x10GBps"), ("--overhead", "0x1p-3s")]:
            with self.subTest(flag=flag):
                self.assert_refused(["run", "--topology", "star:4", flag, value], "not a")

    def test_a_platform_host_without_a_name(self):
        platform = self.write("p.xml", PLATFORM_HEAD + "<zone id='z' routing='Full'><host id='' speed='1Gf'/></zone>"
                              "</platform>")
        self.assert_refused(["run", "--workers", "1", "--topology", platform], "line 4", "empty id")

    def test_message_estimate_counts_the_buckets_of_layered_training(self):
        # 3000 one-byte buckets (1000 parameters each) at p = 256, ring allreduce:
        # 3000 x 2 x 256 x 255 = 3.92e8 messages > 3e8 (without replay, which would count
        # these identical buckets once: training.md#replay)
        layers = {"uniform": {"count": 3000, "parameters": 3000000}}
        document = {"workers": 256, "topology": "star:256", "training": {"layers": layers, "bucket": 1, "replay": False}}
        self.assert_refused(["run", self.scenario(document)], "3000 buckets", r"3\.92e\+08 messages",
                            timeout=5)


class Perfetto(Hardening):
    def test_a_small_trace_cannot_expand_without_bound(self):
        trace = self.tmp / "t.json"
        self.assert_ok("run", *SMALL, "--trace", trace, "-q")
        document = json.loads(trace.read_text())
        document["scenario"]["workers"] = 1000000
        trace.write_text(json.dumps(document))
        self.assert_refused(["render", trace, "--perfetto", self.tmp / "p.json"], "--perfetto", "would expand")



class BuildSwitches(unittest.TestCase):
    """CMake reads any word but ON/TRUE/YES/1 as false: -DCOLLSIM_MIMALLOC=maybe built without
    mimalloc, silently. The switches refuse it, naming the switch and what is allowed."""

    def test_a_switch_that_is_neither_on_nor_off_is_refused(self):
        for switch in ("COLLSIM_MIMALLOC", "COLLSIM_SANITIZE"):
            with self.subTest(switch=switch), tempfile.TemporaryDirectory() as build:
                done = subprocess.run(["cmake", "-S", str(REPO), "-B", build, f"-D{switch}=maybe"],
                                      capture_output=True, text=True, timeout=120)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(f"{switch} is 'maybe': allowed are ON or OFF", " ".join(done.stderr.split()))

if __name__ == "__main__":
    unittest.main()
