"""Published step times of Megatron-LM reproduced by the simulated step (docs/training.md,
"Published step times reproduced by the simulated step"): Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198), their
22B model on one DGX A100 (Table 3: tensor 8, micro-batch 4, global batch 4, sequence 2048,
vocabulary 51,200).

The one compute input is the paper's own: Table 4's measured time of one block with sequence
parallelism and selective recomputation, 20.3 ms. From it and the block's FLOPs (counted here
by hand) less the simulated tensor collectives, the fraction of the A100's 312 TFLOP/s peak
follows; the other four rows of Table 4 and both iteration times of Table 5 are predictions.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -B -m unittest -v test_llm_published
"""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from cli_common import COLLSIM

PEAK = 312e12                                   # A100 SXM datasheet, dense BF16 Tensor Core
H, S, B, T, L, V = 6144, 2048, 4, 8, 48, 51200  # Table 3's 22B: hidden, sequence, micro-batch, tensor, layers; sec. 6's vocabulary
FORWARD = (24 * B * S * H * H + 4 * B * S * S * H) / T   # a block's forward FLOPs per GPU (their Appendix A)
ATTENTION = 4 * B * S * S * H / T                        # what selective recomputation redoes
LOGITS = 3 * 2 * B * S * H * V / T                       # the output layer, forward and backward
# Table 4 (ms per block, forward + backward) and Table 5 (s per iteration)
TABLE4 = {("none", False): 19.6, ("none", True): 19.0, ("full", False): 27.2, ("selective", False): 20.9,
          ("selective", True): 20.3}
TABLE5 = {("full", False): 1.42, ("selective", True): 1.10}
MFU_PRESENT_WORK = 0.415


def scenario(recompute, sequence_parallel, efficiency):
    return {"topology": "dgx-a100:1",
            "parallelism": {"tensor": T, "step": {
                "model": "gpt3-175b", "layers": L, "hidden": H, "ffn_hidden": 4 * H, "heads": 64, "kv_heads": 64,
                "vocab": V, "sequence": S, "micro_batch": B, "global_batch": B, "gpu": "a100",
                "efficiency": efficiency, "recompute": recompute, "sequence_parallel": sequence_parallel}}}


def gpt3_scenario(recompute, sequence_parallel, efficiency, global_batch, scatter_gather=True):
    """Table 3's GPT-3 175B: tensor 8 x pipeline 8, micro-batch 1, 3 interleaved chunks (sec. 6), the
    pipeline's tensors scatter/gathered as the paper's Megatron-LM did (on by default then; it does
    nothing with sequence parallelism)."""
    return {"topology": "dgx-a100:8",
            "parallelism": {"tensor": 8, "pipeline": 8, "step": {
                "model": "gpt3-175b", "vocab": V, "sequence": S, "micro_batch": 1, "global_batch": global_batch,
                "gpu": "a100", "efficiency": efficiency, "recompute": recompute,
                "sequence_parallel": sequence_parallel, "virtual_stages": 3, "pipeline_scatter_gather": scatter_gather}}}


def step(recompute, sequence_parallel, efficiency, document=None):
    """The simulated step's figures (the trace's parallel.step.figures)."""
    with tempfile.TemporaryDirectory() as folder:
        path, trace = Path(folder) / "s.json", Path(folder) / "t.json"
        path.write_text(json.dumps(document or scenario(recompute, sequence_parallel, efficiency)))
        subprocess.run([COLLSIM, "run", "--quiet", "--trace", str(trace), str(path)], check=True, timeout=300)
        return json.loads(trace.read_text())["parallel"]["step"]["figures"]


def block_flops(recompute):
    return 3 * FORWARD + {"none": 0, "selective": ATTENTION, "full": FORWARD}[recompute]


class Korthikanti22B(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # the tensor collectives do not depend on the compute's speed (no pipeline, no data
        # parallelism: nothing overlaps them), so one run at the peak gives them
        measured = step("selective", True, 1.0)
        tensor_per_block = measured["exposed"]["tensor"] / L
        cls.efficiency = block_flops("selective") / PEAK / (TABLE4[("selective", True)] * 1e-3 - tensor_per_block)

    def block_ms(self, figures, recompute):
        """One block's forward and backward: the step less the logits, over the blocks."""
        return 1e3 * (figures["step_time"] - LOGITS / (PEAK * self.efficiency)) / L

    def test_the_compute_input_is_the_measured_block(self):
        figures = step("selective", True, self.efficiency)
        self.assertAlmostEqual(self.block_ms(figures, "selective"), 20.3, delta=1e-6)
        self.assertGreater(self.efficiency, 0.5)
        self.assertLess(self.efficiency, 0.56)

    def test_table4_other_rows_within_6_percent(self):
        # docs/training.md: -0.2% (full), -3.0% (selective), +1.9% (none), +5.3% (sequence parallel only)
        for (recompute, sp), published in TABLE4.items():
            with self.subTest(recompute=recompute, sequence_parallel=sp):
                simulated = self.block_ms(step(recompute, sp, self.efficiency), recompute)
                self.assertLess(abs(simulated / published - 1), 0.06, (simulated, published))
                if recompute == "full":
                    self.assertLess(abs(simulated / published - 1), 0.01, (simulated, published))

    def test_table5_iterations_and_their_difference(self):
        full, present = step("full", False, self.efficiency), step("selective", True, self.efficiency)
        # the simulated step has no optimizer step, embedding or loss: both end early, within
        # 12% of the published iteration (docs/training.md: 106 and 115 ms early). No closer
        # figure is asserted for that gap: nothing outside the simulation predicts it, and a
        # tolerance around the simulation's own 0.11 s would only freeze its output
        for figures, published in ((full, TABLE5[("full", False)]), (present, TABLE5[("selective", True)])):
            self.assertGreater(figures["step_time"] / published, 0.88, (figures["step_time"], published))
            self.assertLess(figures["step_time"] / published, 0.93, (figures["step_time"], published))
        # what full recomputation costs over the present work: 0.32 s published (two digits:
        # +-0.01 s, i.e. +-3% of it), which the missing work cancels from; predicted within that
        # rounding (docs: +2.5%, full recomputation's forward collectives each paying NCCL's
        # launch and hops)
        published = TABLE5[("full", False)] - TABLE5[("selective", True)]
        self.assertLess(abs((full["step_time"] - present["step_time"]) / published - 1), 0.03)
        # MFU: the model's FLOPs (3 passes, no recomputation) over the step at the peak
        model_flops = T * L * 3 * FORWARD + T * LOGITS
        self.assertAlmostEqual(present["mfu"], model_flops / (present["step_time"] * T * PEAK), delta=1e-9)
        self.assertLess(abs(present["mfu"] - MFU_PRESENT_WORK - 0.05), 0.01, present["mfu"])


def planned_step(document):
    """The plan of a step (collsim validate --plan): parallel.step."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(document))
        run = subprocess.run([COLLSIM, "validate", "--plan", str(path)], check=True, capture_output=True, text=True,
                             timeout=60)
        return json.loads(run.stdout)["parallel"]["step"]


class GPT3Reduced(unittest.TestCase):
    def test_pipeline_messages_are_what_megatron_sends(self):
        # each GPU sends its next stage b s h bf16 (micro-batch 1, GPT-3's h = 12288); with
        # sequence parallelism its s/8 share (Megatron's get_tensor_shapes divides the sequence by
        # the tensor size, megatron/core/pipeline_parallel/schedules.py) and nothing gathered;
        # with the scatter/gather 1/8 of the flattened tensor, all-gathered (b s h) on arrival
        whole = 2 * S * 12288
        full = planned_step(gpt3_scenario("full", False, 0.65, 16))
        self.assertEqual(full["pipeline_bytes"], whole / 8)
        self.assertTrue(full["algorithms"]["pipeline_gather"]["reason"].startswith("auto:"))  # the tensor group's "auto"
        self.assertEqual(planned_step(gpt3_scenario("full", False, 0.65, 16, False))["pipeline_bytes"], whole)
        present = planned_step(gpt3_scenario("selective", True, 0.65, 16))
        self.assertEqual(present["pipeline_bytes"], whole / 8)
        self.assertIsNone(present["algorithms"]["pipeline_gather"])

    def test_throughput_increase_is_table5s(self):
        # The full step's 64 micro-batches (2.75 M messages) reduced to 16. Both rows send what
        # the paper's Megatron-LM sent: each GPU 1/8 of the activation, the present work by
        # sequence parallelism (its s/8 share), full recomputation (no sequence parallelism) by
        # Megatron-LM's scatter/gather of the pipeline's tensors (on by default then; the
        # receiving tensor group all-gathers them over NVLink, which the simulated row pays too).
        # The increase is held to Table 5's 31.8%, less a point (two printed digits), plus two
        # points: the band the validation claims (docs/training.md gives 33.2% here, 32.7% at
        # 45% of the peak: the ratio hardly depends on the compute input, the one thing taken
        # from the 22B model); sending whole activations instead made it 37.3%, outside it.
        for efficiency in (0.65,):
            with self.subTest(efficiency=efficiency):
                full = step(None, None, None, gpt3_scenario("full", False, efficiency, 16))
                present = step(None, None, None, gpt3_scenario("selective", True, efficiency, 16))
                increase = full["step_time"] / present["step_time"] - 1
                self.assertGreater(increase, 0.318 - 0.01)  # Table 5: 31.8%
                self.assertLess(increase, 0.318 + 0.02)


if __name__ == "__main__":
    unittest.main()
