"""`collsim sweep layouts`: the layouts of a transformer on a GPU cluster, ranked
(docs/training.md#layout-search). The figures are the alpha-beta estimate's, whose pieces
tests/unit/llm_layout_test.cpp checks by hand; here the command as a user meets it: what
it enumerates, what it refuses, the CSV, the errors.

    cd tests/cli && COLLSIM=../../build/collsim python3 -m unittest -v test_layouts
"""
import csv
import json
import re
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from cli_common import COLLSIM


def layouts(*args):
    return subprocess.run([COLLSIM, "sweep", "layouts", *map(str, args)], capture_output=True, text=True, timeout=60)



class Enumeration(unittest.TestCase):
    def table(self, *args):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "layouts.csv"
            run = layouts(*args, "--out", out)
            self.assertEqual(run.returncode, 0, run.stderr)
            return run.stdout, list(csv.DictReader(out.read_text().splitlines()))

    def test_every_layout_of_16_gpus_for_the_tiny_model(self):
        # 2 nodes of 8: tensor 1, 2, 4, 8 (dividing a node and the 8 heads); pipeline at most
        # the 4 layers; data dividing the global batch 8: tensor 1 with pipeline 1 (data 16)
        # is out, so 2 + 3 + 3 + 2 = 10 layouts (plain 1F1B: interleaving below).
        stdout, rows = self.table("--model", "tiny", "--topology", "dgx-h100:2", "--max-virtual-stages", "1")
        names = [row["layout"] for row in rows]
        self.assertEqual(len(names), 10, names)
        self.assertNotIn("TP1 PP1 DP16", names)
        for row in rows:
            self.assertEqual(int(row["tensor"]) * int(row["pipeline"]) * int(row["data"]), 16)
            self.assertEqual(row["fits"], "yes")
            self.assertEqual(row["recompute"], "none")
        times = [float(row["step_time"]) for row in rows]
        self.assertEqual(times, sorted(times), "ranked by step time")
        self.assertIn("10 layouts: 10 fit in memory, 0 do not", stdout)
        self.assertIn(f"     1  {names[0]}", stdout)
        self.assertIn(f"fastest: {names[0]}, recompute none: compute", stdout)

    def test_every_interleaving_megatron_allows_is_a_layout(self):
        # The same 16 GPUs: 2 chunks of 1 block on 2 stages where a replica's 8 / data
        # micro-batches make whole groups of 2 (TP2 PP2 DP4, TP4 PP2 DP2, TP8 PP2 DP1; TP1 PP2
        # DP8 has 1); 4 stages of 1 block have nothing to split: 10 + 3 layouts.
        stdout, rows = self.table("--model", "tiny", "--topology", "dgx-h100:2")
        interleaved = sorted(row["layout"] for row in rows if row["virtual_stages"] != "1")
        self.assertEqual(interleaved, ["TP2 PP2 DP4 VP2", "TP4 PP2 DP2 VP2", "TP8 PP2 DP1 VP2"])
        self.assertIn("13 layouts: 13 fit in memory, 0 do not", stdout)
        for row in rows:
            self.assertEqual(int(row["virtual_stages"]), 2 if row["layout"].endswith(" VP2") else 1)
        _, capped = self.table("--model", "tiny", "--topology", "dgx-h100:2", "--max-virtual-stages", "2")
        self.assertEqual(len(capped), 13)

    def test_the_parts_add_up_to_the_step(self):
        _, rows = self.table("--model", "llama3-8b", "--topology", "dgx-h100:4", "--efficiency", "0.4")
        for row in rows:
            if row["fits"] != "yes":
                continue
            with self.subTest(layout=row["layout"]):
                pipeline, chunks = int(row["pipeline"]), int(row["virtual_stages"])
                micro = 2048 // (int(row["data"]))
                want = (pipeline - 1) / (chunks * micro + pipeline - 1)  # the CSV's 9 digits
                self.assertAlmostEqual(float(row["bubble_fraction"]), want, delta=1e-8 * want)
                self.assertLess(float(row["mfu"]), 0.4)  # never above the fraction of the peak stated
                self.assertAlmostEqual(float(row["tokens_per_second"]) * float(row["step_time"]), 2048 * 8192, delta=1e-8 * 2048 * 8192)

    def test_memory_decides_the_recomputation_and_what_fits(self):
        # Llama 3 70B on 4 DGX H100 (32 GPUs of 80 GB): a layout without tensor or pipeline
        # parallelism holds 16 x 70.55 B bytes of states per GPU, and never fits.
        _, rows = self.table("--model", "llama3-70b", "--topology", "dgx-h100:4", "--zero", "1")
        by_name = {row["layout"]: row for row in rows}
        self.assertEqual(by_name["TP1 PP1 DP32"]["fits"], "no")
        self.assertGreater(float(by_name["TP1 PP1 DP32"]["memory_per_gpu"]), 80e9)
        fitting = [row for row in rows if row["fits"] == "yes"]
        self.assertTrue(fitting)
        for row in fitting:
            self.assertLessEqual(float(row["memory_per_gpu"]), 80e9)
        _, full = self.table("--model", "llama3-70b", "--topology", "dgx-h100:4", "--zero", "1", "--recompute", "full")
        self.assertTrue(all(row["recompute"] == "full" for row in full))

    def test_a_mixture_of_experts_gets_expert_groups(self):
        stdout, rows = self.table("--model", "mixtral-8x7b", "--topology", "dgx-h100:8", "--top", "3")
        experts = {int(row["expert"]) for row in rows}
        self.assertEqual(experts, {1, 2, 4, 8})
        self.assertEqual(stdout.count("\n"), 2 + 1 + 3 + 1)  # header, counts, column names, 3 layouts, the fastest


    def test_other_clusters(self):
        # GB200 NVL72: 72 GPUs a node; Llama 3 70B's 64 heads and 8 key/value heads leave
        # tensor 1, 2, 4 or 8; B200's 2.5 PFLOP/s and 186 GB from the NVL72 datasheet.
        stdout, rows = self.table("--model", "llama3-70b", "--topology", "gb200-nvl72:2", "--efficiency", "0.4")
        self.assertEqual({int(row["tensor"]) for row in rows}, {1, 2, 4, 8})
        self.assertIn("144 b200 GPUs of 186.1 GB, 72 per node; compute at 40% of 2500 TFLOP/s", stdout)
        stdout, rows = self.table("--model", "gpt3-175b", "--topology", "dgx-a100:8", "--recompute", "full")
        self.assertIn("64 a100 GPUs of 80 GB, 8 per node; compute at 100% of 312 TFLOP/s", stdout)
        self.assertTrue(all(int(row["tensor"]) * int(row["pipeline"]) * int(row["data"]) == 64 for row in rows))


class BadInput(unittest.TestCase):
    def refused(self, *args, says):
        run = layouts(*args)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertEqual(run.stderr.count("\n"), 1, run.stderr)
        self.assertIn(says, run.stderr)
        self.assertEqual(run.stdout, "")

    def test_each_bad_input_is_one_line(self):
        self.refused("--model", "llama3-7b", "--topology", "dgx-h100:1",
                     says="collsim: error: --model: unknown model 'llama3-7b' (did you mean 'llama3-8b'?); allowed: gpt3-175b")
        self.refused("--model", "tiny", "--topology", "star:8", says="--topology: 'star:8' is not a GPU cluster; allowed:")
        self.refused("--model", "tiny", "--topology", "dgx-h100:0", says="--topology:")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--efficiency", "0", says="--efficiency: 0 is not a fraction")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--efficiency", "1.5", says="allowed: above 0, at most 1")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--zero", "4", says="--zero: 4 is not a ZeRO stage")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--recompute", "partial",
                     says="--recompute: unknown recomputation 'partial'; allowed: none, selective, full")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--global-batch", "3", "--micro-batch", "2",
                     says="--model: global_batch (3) must be a multiple of micro_batch (2)")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--global-batch", "-1", says="--global-batch")
        self.refused("--topology", "dgx-h100:1", says="--model is required")
        with tempfile.TemporaryDirectory() as folder:
            self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--out", folder, says="--out")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--simulate", "2", "--zero", "2",
                     says="--simulate: the simulated step runs ZeRO 0 or 1")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--jobs", "2", says="--jobs: runs the layouts of --simulate")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--simulate", "0", says="--simulate")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--max-messages", "5",
                     says="--max-messages: limits the layouts of --simulate")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--simulate", "1", "--max-messages", "0",
                     says="--max-messages")
        self.refused("--model", "tiny", "--topology", "dgx-h100:1", "--max-virtual-stages", "0", says="--max-virtual-stages")

    def test_no_layout_that_fits_is_a_failure(self):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "layouts.csv"
            run = layouts("--model", "llama3-405b", "--topology", "dgx-h100:1", "--out", out)
            self.assertEqual(run.returncode, 1)
            self.assertEqual(run.stderr, "collsim: error: no layout of 8 GPUs fits llama3-405b in 80 GB per GPU\n")
            self.assertTrue(all(row["fits"] == "no" for row in csv.DictReader(out.read_text().splitlines())))

    def test_help_names_every_flag(self):
        run = subprocess.run([COLLSIM, "sweep", "layouts", "--help"], capture_output=True, text=True, timeout=60)
        for flag in ["--model", "--topology", "--efficiency", "--top", "--zero", "--sequence-parallel", "--recompute",
                     "--micro-batch", "--global-batch", "--sequence", "--out", "--simulate", "--jobs", "--max-messages",
                     "--max-virtual-stages", "--scenario"]:
            self.assertIn(flag, run.stdout)


TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def seconds(text):
    value, unit = text.split()
    return float(value) * TIME_UNITS[unit]



def run_layout(test, layout, step):
    """The step time (seconds) of `layout` ("TP2 PP2 DP4 VP2") with `step`, written by hand as
    a scenario on dgx-h100:2 and run."""
    sizes = {part[:2]: int(part[2:]) for part in layout.split()}
    if "VP" in sizes:
        step = {**step, "virtual_stages": sizes["VP"]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "layout.json"
        path.write_text(json.dumps({"topology": "dgx-h100:2", "parallelism": {
            "tensor": sizes["TP"], "pipeline": sizes["PP"], "data": sizes["DP"], "step": step}}))
        run = subprocess.run([COLLSIM, "run", str(path)], capture_output=True, text=True, timeout=120)
    test.assertEqual(run.returncode, 0, run.stderr)
    return seconds(re.search(r"(?m)^step time\s+(\S+ \S+):", run.stdout)[1])


class Simulate(unittest.TestCase):
    """--simulate: the first layouts by the estimate, run through the simulated step."""

    def simulated_rows(self, *args):
        run = layouts(*args)
        self.assertEqual(run.returncode, 0, run.stderr)
        table = run.stdout.split("simulated (parallelism.step", 1)[1]
        rows = re.findall(r"(?m)^\s+\d+\s+(TP\d+ PP\d+ DP\d+(?: VP\d+)?)\s+(\S+ \S+)\s+(\S+ \S+)\s", table)
        return {layout: (seconds(estimate), seconds(simulated)) for layout, estimate, simulated in rows}

    def test_one_gpu_step_is_its_flops_at_the_stated_efficiency(self):
        # tiny: l 4 blocks, h 256, f 1024, V 1024, s 256, 8 samples a step. Forward FLOPs a token
        # (Narayanan et al. eq. 3's terms): l (8h^2 + 4hf + 4sh) + 2hV; backward twice that; no
        # recomputation, no communication on one GPU: the step is the FLOPs at half the H100's
        # 989.5 TFLOP/s
        l, h, f, V, s = 4, 256, 1024, 1024, 256
        flops = 3 * 8 * s * (l * (8 * h * h + 4 * h * f + 4 * s * h) + 2 * h * V)
        rows = self.simulated_rows("--model", "tiny", "--topology", "rail:1:1", "--efficiency", "0.5", "--simulate", "1")
        self.assertEqual(list(rows), ["TP1 PP1 DP1"])
        self.assertAlmostEqual(rows["TP1 PP1 DP1"][1], flops / (0.5 * 989.5e12), delta=1e-5 * rows["TP1 PP1 DP1"][1])

    def test_a_simulated_layout_is_the_step_its_scenario_runs(self):
        # the same layout written by hand as a scenario (docs/parallelism.md) and run: the same step
        rows = self.simulated_rows("--model", "tiny", "--topology", "dgx-h100:2", "--efficiency", "0.5", "--simulate", "3",
                                   "--jobs", "1")
        self.assertEqual(len(rows), 3, rows)
        for layout in rows:
            self.assertAlmostEqual(rows[layout][1], self.run_layout(layout), delta=1e-5 * rows[layout][1])
        simulated = [times[1] for times in rows.values()]
        self.assertEqual(simulated, sorted(simulated))  # ranked by the simulated step

    def run_layout(self, layout):
        return run_layout(self, layout, {"model": "tiny", "gpu": "h100", "efficiency": 0.5})

    def test_an_interleaved_layout_is_simulated_with_its_chunks(self):
        # all 13 layouts of tiny on 16 GPUs simulated: each of the 3 interleaved rows is its
        # scenario with "virtual_stages": 2, written and run by hand
        rows = self.simulated_rows("--model", "tiny", "--topology", "dgx-h100:2", "--efficiency", "0.5", "--simulate", "13",
                                   "--jobs", "1")
        interleaved = [layout for layout in rows if layout.endswith(" VP2")]
        self.assertEqual(len(interleaved), 3, rows)
        for layout in interleaved:
            self.assertAlmostEqual(rows[layout][1], self.run_layout(layout), delta=1e-5 * rows[layout][1])

    def test_a_step_too_large_to_simulate_is_refused_before_simulating(self):
        # llama3-70b on 128 H100s, the preset's 2048 sequences: the first layout by the
        # estimate, TP8 PP8 DP2 (selective recomputation: no collective repeated), has 1024
        # micro-batches per replica through 10 blocks per stage, each with 4 tensor allreduces,
        # rings of 2 x 7 messages per rank: 1024 x 10 x 56 per rank on 128 GPUs = 73,400,320;
        # the pipeline's 2 (8 - 1) x 1024 per tensor x data chain of 16 = 229,376; each block
        # (856 M parameters / 8 > 40 M) a bucket, allreduced on 2: 10 x 2 x 128 = 2,560.
        # 73,632,256 messages, above the default limit of 10 M: refused in one line, at once
        started = time.monotonic()
        run = layouts("--model", "llama3-70b", "--topology", "dgx-h100:16", "--simulate", "1")
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertEqual(run.stderr.count("\n"), 1, run.stderr)
        self.assertIn("collsim: error: --max-messages: TP8 PP8 DP2's step would send about 7.36e+07 messages", run.stderr)
        self.assertIn("raise it with --max-messages N", run.stderr)
        self.assertIn("cost before simulating, in messages counted as rings (--max-messages 10000000): "
                      "TP8 PP8 DP2 7.36e+07 (over)", run.stdout)
        self.assertNotIn("simulated (parallelism.step", run.stdout)

    def test_a_layout_over_the_limit_is_listed_and_the_others_simulated(self):
        # tiny on one DGX H100 (8 GPUs), 8 sequences: the limit between the layouts' counts
        # simulates those under it and lists the others as not simulated, with their count
        run = layouts("--model", "tiny", "--topology", "dgx-h100:1", "--efficiency", "0.5", "--simulate", "3",
                      "--jobs", "1", "--max-messages", "100")
        self.assertEqual(run.returncode, 0, run.stderr)
        cost = re.search(r"(?m)^cost before simulating.*: (.*)$", run.stdout)[1]
        counts = {m[1]: (float(m[2]), bool(m[3]))
                  for m in re.finditer(r"(TP\d+ PP\d+ DP\d+(?: VP\d+)?) ([0-9.e+]+)( \(over\))?", cost)}
        self.assertEqual(len(counts), 3, cost)
        self.assertEqual(sorted(over for _, over in counts.values()), [False, False, True], cost)
        for layout, (count, over) in counts.items():
            self.assertEqual(over, count > 100, layout)
            listed = re.search(rf"(?m)^\s+\S+\s+{layout}\s.*$", run.stdout.split("simulated (parallelism.step", 1)[1])[0]
            self.assertEqual("not simulated" in listed, over, listed)


class FromAScenario(unittest.TestCase):
    """--scenario STEP.json: the layouts of a step scenario's own model and cluster."""

    STEP = {"model": "tiny", "layers": 8, "hidden": 512, "global_batch": 8, "efficiency": 0.5}

    def search(self, step, *args, parallelism=None):
        with tempfile.TemporaryDirectory() as folder:
            path, out = Path(folder) / "step.json", Path(folder) / "layouts.csv"
            path.write_text(json.dumps({"topology": "dgx-h100:2", "parallelism": {
                **(parallelism or {"tensor": 4, "pipeline": 2, "data": 2}), "step": step}}))
            run = layouts("--scenario", path, "--out", out, *args)
            self.assertEqual(run.returncode, 0, run.stderr)
            return run.stdout, list(csv.DictReader(out.read_text().splitlines()))

    def test_the_scenarios_model_and_cluster_are_searched(self):
        # tiny reshaped (8 blocks of hidden 512) has no preset to name: the search from the
        # scenario is the flags' search of tiny with what the flags can say (the same layouts
        # and step times scale with the FLOPs, so they cannot equal the preset's), and the
        # scenario's own layout is found in the ranking with its row's step time
        stdout, rows = self.search(self.STEP)
        preset_out, preset_rows = Enumeration.table(self, "--model", "tiny", "--topology", "dgx-h100:2",
                                                    "--efficiency", "0.5")
        plain = {r["layout"]: r for r in rows if r["virtual_stages"] == "1"}
        preset_plain = {r["layout"] for r in preset_rows if r["virtual_stages"] == "1"}
        self.assertLess(preset_plain, set(plain))  # and 8 blocks take 8 stages: TP1 PP8 DP2, TP2 PP8 DP1
        self.assertEqual(sorted(int(plain[name]["pipeline"]) for name in set(plain) - preset_plain), [8, 8])
        preset_time = {r["layout"]: float(r["step_time"]) for r in preset_rows}
        self.assertTrue(all(float(r["step_time"]) > preset_time[r["layout"]] for r in rows if r["layout"] in preset_time))
        own = [i for i, r in enumerate(rows) if r["layout"] == "TP4 PP2 DP2"][0]
        line = re.search(r"(?m)^  the scenario's layout: TP4 PP2 DP2, rank (\d+) by the estimate, (\S+ \S+): compute", stdout)
        self.assertIsNotNone(line, stdout)
        self.assertEqual(int(line[1]), own + 1)
        self.assertAlmostEqual(seconds(line[2]), float(rows[own]["step_time"]), delta=1e-5 * seconds(line[2]))
        # the preset's own search is the scenario's when the scenario changes nothing
        _, same = self.search({"model": "tiny", "efficiency": 0.5, "global_batch": 8})
        self.assertEqual([(r["layout"], r["step_time"]) for r in same], [(r["layout"], r["step_time"]) for r in preset_rows])

    def test_a_simulated_layout_is_the_scenario_with_that_layout(self):
        stdout, _ = self.search(self.STEP, "--simulate", "2", "--jobs", "1")
        table = stdout.split("simulated (parallelism.step", 1)[1]
        rows = re.findall(r"(?m)^\s+\d+\s+(TP\d+ PP\d+ DP\d+(?: VP\d+)?)\s+\S+ \S+\s+(\S+ \S+)\s", table)
        self.assertEqual(len(rows), 2, table)
        for layout, simulated in rows:
            by_hand = run_layout(self, layout, self.STEP)
            self.assertAlmostEqual(seconds(simulated), by_hand, delta=1e-5 * by_hand, msg=layout)

    def test_bad_input_is_one_line(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(json.dumps({"topology": "dgx-h100:1", "parallelism": {"data": 2, "collectives": [
                {"group": "data", "size": "1MiB"}]}}))
            BadInput.refused(self, "--scenario", path, says="--scenario: ")
            BadInput.refused(self, "--scenario", path, "--model", "tiny", says="--scenario excludes --model")
            path.write_text(json.dumps({"topology": "star:8", "parallelism": {"data": 8, "step": self.STEP}}))
            BadInput.refused(self, "--scenario", path, says="topology: 'star:8' is not a GPU cluster")
            BadInput.refused(self, "--scenario", Path(folder) / "missing.json", says="missing.json")


if __name__ == "__main__":
    unittest.main()
