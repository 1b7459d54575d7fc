"""The hierarchical allreduce's algorithm at each level (collective.intra, collective.inter):
on an ideal star (alpha = 2 us, B = 10 GB/s between any two ranks, no link shared by two
transfers) with groups of collective.group_size ranks, the simulated time must be the
formula of docs/algorithms.md#hierarchical, the cost model must give the same, and every rank
must hold the verified sum.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_hierarchy_levels
"""
import json
import math
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

ALPHA, B = 2e-6, 10e9


def ring_half(members, n):
    """A ring reduce-scatter (or allgather) of n bytes among `members` ranks."""
    return (members - 1) * (ALPHA + n / (members * B))


def halving(members, n):
    """Recursive halving (or doubling) of n bytes among a power of two of members."""
    return math.log2(members) * ALPHA + (members - 1) / members * n / B


def tree(members, n):
    """Binomial reduce then broadcast of n bytes."""
    return 2 * math.ceil(math.log2(members)) * (ALPHA + n / B)


def expected(intra, inter, p, g, n):
    groups = p // g
    inside = 2 * (ring_half(g, n) if intra == "ring" else halving(g, n))
    piece = n / g
    across = {"ring": 2 * ring_half(groups, piece), "halving-doubling": 2 * halving(groups, piece),
              "tree": tree(groups, piece)}[inter]
    return inside + across


def run(p, g, n, intra=None, inter=None, expect=0, channels=None, rounds=None):
    collective = {"algorithm": "hierarchical", "size": n, "group_size": g}
    for key, value in (("intra", intra), ("inter", inter), ("channels", channels)):
        if value is not None:
            collective[key] = value
    scenario = {"name": "levels", "topology": f"star:{p}", "workers": p, "network": "ideal", "collective": collective}
    if rounds is not None:
        scenario["training"] = {"rounds": rounds}
    with tempfile.TemporaryDirectory(prefix="collsim-levels-") as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(scenario))
        trace = Path(folder) / "t.json"
        done = subprocess.run([COLLSIM, "run", str(path), "--trace", str(trace), "--quiet"],
                              capture_output=True, text=True, timeout=120)
        if expect != 0:
            return done
        assert done.returncode == 0, done.stderr
        return json.loads(trace.read_text())


class Levels(unittest.TestCase):
    def assert_time(self, intra, inter, p, g, n):
        trace = run(p, g, n, intra, inter)
        s = trace["summary"]
        self.assertTrue(s["verified"])
        want = expected(intra or "ring", inter or "ring", p, g, n)
        self.assertAlmostEqual(s["collective_time"], want, delta=want * 1e-9)
        self.assertAlmostEqual(s["model_time"], want, delta=want * 1e-9)
        return trace

    def test_each_pair_of_levels_takes_its_formula(self):
        # 16 ranks in 4 groups of 4; 8 ranks in 2 groups of 4; 32 ranks in 8 groups of 4
        for p, g in [(16, 4), (8, 4), (32, 4), (16, 2)]:
            n = 4 * 1024 * p
            for intra in ("ring", "halving-doubling"):
                for inter in ("ring", "halving-doubling", "tree"):
                    with self.subTest(p=p, g=g, intra=intra, inter=inter):
                        self.assert_time(intra, inter, p, g, n)

    def test_a_tree_between_a_number_of_groups_that_is_no_power_of_two(self):
        # 3 and 6 groups: the binomial tree takes ceil(log2 G) steps each way
        for p, g in [(12, 4), (12, 2)]:
            with self.subTest(p=p, g=g):
                self.assert_time("ring", "tree", p, g, 4 * 1024 * p)

    def test_rounds_back_to_back_each_take_the_formula(self):
        # A tree over 3 groups: the group the broadcast reaches first is done early and enters
        # the next round while the others finish this one. Each round's collective counts from
        # the previous round's end (not from that early entry: once 1.16x the model at
        # nodes:5:4), and the run takes the rounds' formulas added up.
        for p, g, inter in [(12, 4, "tree"), (20, 4, "tree"), (12, 2, "tree"), (16, 4, "halving-doubling")]:
            with self.subTest(p=p, g=g, inter=inter):
                trace = run(p, g, 4 * 1024 * p, inter=inter, rounds=3)
                want = expected("ring", inter, p, g, 4 * 1024 * p)
                s = trace["summary"]
                self.assertAlmostEqual(s["simulated_time"], 3 * want, delta=want * 1e-9)
                self.assertAlmostEqual(s["collective_time"], want, delta=want * 1e-9)
                for r in trace["rounds"]:
                    self.assertAlmostEqual(r["collective"], want, delta=want * 1e-9, msg=r)

    def test_a_round_entered_early_counts_from_the_previous_ones_end(self):
        # nodes:5:4, a tree between the 5 nodes, 64 MiB, 2 rounds: node 4 (ranks 16-19) is done
        # with round 0 at 22.51 ms of 33.25 and enters round 1; the run takes twice round 0, and
        # round 1's collective is the run's end less round 0's end (was from node 4's entry)
        scenario = {"name": "early", "topology": "nodes:5:4", "workers": 20,
                    "collective": {"algorithm": "hierarchical", "size": "64MiB", "inter": "tree"},
                    "training": {"rounds": 2}}
        with tempfile.TemporaryDirectory(prefix="collsim-levels-") as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps(scenario))
            done = subprocess.run([COLLSIM, "run", str(path), "--trace", str(Path(folder) / "t.json"), "--quiet"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            trace = json.loads((Path(folder) / "t.json").read_text())
        first, second = trace["rounds"]
        self.assertLess(second["start"], first["end"] - first["collective"] / 4)  # entered early
        self.assertAlmostEqual(trace["summary"]["simulated_time"], 2 * first["collective"], delta=1e-12)
        self.assertAlmostEqual(second["collective"], second["end"] - first["end"], delta=1e-12)
        s = trace["summary"]
        self.assertAlmostEqual(s["collective_time"], s["model_time"], delta=s["model_time"] * 1e-9)

    def test_the_phases_name_their_level(self):
        trace = run(8, 2, 32768, "halving-doubling", "tree")
        phases = {m["phase"] for m in trace["messages"]}
        self.assertEqual(phases, {"reduce-scatter", "inter-reduce", "inter-broadcast", "allgather"})
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["levels"],
                         {"intra": "halving-doubling", "inter": "tree"})

    def test_groups_of_different_sizes_verify(self):
        # 6 ranks in groups of 4 and 2: each piece allreduced by its two owners
        for inter in ("halving-doubling", "tree"):
            with self.subTest(inter=inter):
                trace = run(6, 4, 4800, inter=inter)
                self.assertTrue(trace["summary"]["verified"])
                s = trace["summary"]
                self.assertAlmostEqual(s["collective_time"], s["model_time"], delta=s["model_time"] * 1e-9)


def model(*flags, expect=0):
    done = subprocess.run([COLLSIM, "model", "--algorithm", "hierarchical", *flags], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == expect, done.stderr
    return done


def model_time(out):
    line = next(line for line in out.splitlines() if line.strip().startswith("model time"))
    value, unit = line.split()[2:4]
    return float(value) * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


class ModelLevels(unittest.TestCase):
    """collsim model --intra/--inter: the same formulas, on the alpha-beta star with
    --group-size and on an ideal star:P platform with the scenario's group_size."""

    def test_the_star_model_takes_the_levels_formula(self):
        for p, g in [(16, 4), (32, 4), (12, 4)]:
            n = 4 * 1024 * p
            for intra in ("ring", "halving-doubling"):
                for inter in ("ring", "tree") if p == 12 else ("ring", "halving-doubling", "tree"):
                    with self.subTest(p=p, g=g, intra=intra, inter=inter):
                        out = model("--workers", str(p), "--group-size", str(g), "--size", str(n), "--bandwidth",
                                    "10GBps", "--latency", "2us", "--intra", intra, "--inter", inter).stdout
                        want = expected(intra, inter, p, g, n)
                        self.assertAlmostEqual(model_time(out), want, delta=want * 1e-5)  # 6 digits printed

    def test_the_levels_reach_the_model_on_a_platform(self):
        p, g, n = 16, 4, 65536
        out = model("--workers", str(p), "--topology", f"star:{p}", "--size", str(n), "--intra", "halving-doubling",
                    "--inter", "tree").stdout
        # star:16's platform is one zone: one group of 16, halving-doubling inside, no level between
        want = 2 * halving(p, n)
        self.assertAlmostEqual(model_time(out), want, delta=want * 1e-5)

    def test_bad_levels_name_the_flags(self):
        base = ["--workers", "6", "--group-size", "2", "--size", "4096", "--bandwidth", "10GBps", "--latency", "1us"]
        for flags, fragment in [
                (["--inter", "mesh"], "--inter: unknown algorithm 'mesh'"),
                (["--intra", "tree"], "--intra: a tree inside the groups"),
                (["--intra", "mesh"], "--intra: unknown algorithm 'mesh'; allowed: ring, halving-doubling, nvls"),
                (["--inter", "halving-doubling"], "--inter: halving-doubling needs a power of two of groups; there are 3"),
                (["--inter", "tree", "--channels", "2"], "--channels: channels cut the vector over rings"),
                (["--topology", "star:6", "--intra", "halving-doubling"],
                 "--intra: halving-doubling needs a power of two of ranks in every group")]:
            with self.subTest(flags=flags):
                # a platform gives the routes: no --bandwidth or --latency with it
                args = ["--workers", "6", "--size", "4096", *flags] if "--topology" in flags else base + flags
                done = model(*args, expect=2)
                lines = done.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, done.stderr)
                self.assertTrue(lines[0].startswith("collsim: error: " + fragment), done.stderr)
                if flags == ["--intra", "mesh"]:  # only what intra allows: no tree
                    self.assertEqual(lines[0], "collsim: error: " + fragment)
        done = subprocess.run([COLLSIM, "model", "--algorithm", "ring", *base[:2], *base[4:], "--inter", "tree"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("--inter: ring allreduce does not read it (read by: hierarchical allreduce)", done.stderr)


class BadLevels(unittest.TestCase):
    def assert_refused(self, fragment, **kwargs):
        done = run(expect=2, **kwargs)
        self.assertEqual(done.returncode, 2, done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), done.stderr)
        self.assertIn(fragment, lines[0])

    def test_unknown_level(self):
        self.assert_refused("collective.inter: unknown algorithm 'mesh'", p=8, g=2, n=4096, inter="mesh")

    def test_unknown_level_inside_lists_what_intra_allows(self):
        done = run(expect=2, p=8, g=2, n=4096, intra="mesh")
        self.assertEqual(done.stderr, "collsim: error: collective.intra: unknown algorithm 'mesh'; allowed: ring, "
                                      "halving-doubling, nvls\n")

    def test_a_tree_inside_the_groups(self):
        self.assert_refused("collective.intra: a tree inside the groups", p=8, g=2, n=4096, intra="tree")

    def test_halving_doubling_needs_a_power_of_two(self):
        self.assert_refused("collective.inter: halving-doubling needs a power of two of groups; there are 3",
                            p=6, g=2, n=4096, inter="halving-doubling")
        self.assert_refused("collective.intra: halving-doubling needs a power of two of ranks in every group",
                            p=9, g=3, n=4608, intra="halving-doubling")

    def test_levels_with_channels(self):
        self.assert_refused("collective.channels: channels cut the vector over rings", p=8, g=2, n=4096,
                            inter="tree", channels=2)

    def test_an_algorithm_without_levels(self):
        done = subprocess.run([COLLSIM, "validate", "--algorithm", "ring", "--workers", "4", "--topology", "star:4",
                               "--set", "collective.inter=tree"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("collective.inter: ring allreduce does not read it (read by: hierarchical allreduce)", done.stderr)


if __name__ == "__main__":
    unittest.main()
