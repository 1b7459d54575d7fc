"""Lab 4 (docs/labs/lab4-stalls-and-recovery.md): every command of the page runs, and every
figure it quotes is checked against the alpha-beta arithmetic written out here.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_lab4 -v   (from tests/cli)
"""
import csv
import json
import unittest

from labs_common import OUT, REPO, LabTest, figures_in_page, run_lab_commands

PAGE = "lab4-stalls-and-recovery.md"
N, P, ALPHA, B, C, F = 64 * 2**20, 3, 2e-6, 10e9, 20e-3, 0.01


def ring(p, bandwidth=B):
    return 2 * (p - 1) * (ALPHA + N / (p * bandwidth))


def step(p, bandwidth=B):
    return ALPHA + N / (p * bandwidth)


class Lab4(LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = run_lab_commands(PAGE)
        out = OUT
        cls.wait = json.loads((out / "lab4-wait.json").read_text())
        cls.rebuild = json.loads((out / "lab4-rebuild.json").read_text())
        cls.short = json.loads((out / "lab4-3ms.json").read_text())
        with open(out / "lab4-timeout.csv") as table:
            cls.sweep = {round(float(row["recovery.timeout"]) * 1000): row for row in csv.DictReader(table)}
        cls.page = figures_in_page(PAGE)
        cls.answers = figures_in_page("answers-lab4.md")

    def test_background_figures(self):
        self.assertClose(8.956e-3, ring(3), rel=1e-4)
        self.assertQuoted("T(3) = 8.956 ms", "page")
        self.assertClose(2.239e-3, step(3), rel=1e-3)
        self.assertQuoted("2.239 ms", "page")
        self.assertClose(894.8e-3, ring(3, F * B), rel=1e-4)
        self.assertQuoted("894.8 ms", "page")
        self.assertClose(6.715e-3, ring(2), rel=1e-4)
        self.assertQuoted("6.715 ms", "page")
        self.assertClose(6.717e-3, 3 * step(3), rel=1e-3)
        self.assertQuoted("3 x 2.239 ms = 6.717 ms", "page")

    def test_waiting_stretches_every_round_after_the_fault(self):
        rounds = [r["end"] - r["start"] for r in self.wait["rounds"]]
        for r in rounds[:2]:
            self.assertClose(C + ring(3), r)
        for r in rounds[2:]:
            self.assertClose(C + ring(3, F * B), r)
        total = 2 * (C + ring(3)) + 3 * (C + ring(3, F * B))
        self.assertClose(total, self.wait["summary"]["simulated_time"])
        self.assertClose(total - 5 * (C + ring(3)), self.wait["summary"]["time_lost"])
        self.assertQuoted("28.96 ms", "page")
        self.assertQuoted("914.8 ms", "page")
        self.assertQuoted("2.802 s", "page")
        self.assertQuoted("144.8 ms", "page")
        self.assertQuoted("2.658 s lost", "page")
        self.assertClose(2.802, total, rel=1e-3)
        self.assertClose(0.1448, 5 * (C + ring(3)), rel=1e-3)
        self.assertClose(2.658, total - 5 * (C + ring(3)), rel=1e-3)

    def test_rebuilding_detects_three_chunks_after_the_stalled_collective_began(self):
        recovery = self.rebuild["recovery"][0]
        started = 2 * (C + ring(3)) + C
        self.assertEqual([2], recovery["dropped_ranks"])
        # the first step's transfers with rank 2 pass their deadline, 3 chunks, together
        self.assertClose(started + 3 * step(3), recovery["detected"])
        self.assertQuoted("77.91 ms", "page")
        self.assertQuoted("84.63 ms (77.91 + 3 x 2.239)", "page")
        self.assertClose(84.63e-3, recovery["detected"], rel=1e-4)
        # the last survivor resumes when its verdict arrives: a few control messages (alpha each) later
        self.assertLess(abs(recovery["resumed"] + ring(2) - recovery["round_completed"]), 3 * ALPHA)
        for later in self.rebuild["rounds"][3:]:
            self.assertClose(C + ring(2), later["end"] - later["start"])
        self.assertQuoted("26.71 ms", "page")
        summary = self.rebuild["summary"]
        # (plus the verdicts' trips: a few control messages of alpha each)
        self.assertLess(abs(started + 3 * step(3) + ring(2) + 2 * (C + ring(2)) - summary["simulated_time"]), 4 * ALPHA)
        self.assertClose(144.78e-3, summary["simulated_time"], rel=1e-4)
        self.assertQuoted("The run takes 144.78 ms", "page")
        self.assertEqual([], summary["recovery_quality"]["healthy_dropped"])
        self.assertTrue(summary["verified"] and summary["models_identical"])

    def test_timeouts_below_one_chunk_drop_nobody_healthy(self):
        for ms in (1, 2):
            self.assertLess(ms * 1e-3, step(3))
            self.assertEqual("false", self.sweep[ms]["stalled"])
            self.assertEqual("5", self.sweep[ms]["rounds_completed"])

    def test_between_the_two_every_millisecond_of_timeout_is_lost(self):
        constant = None
        for ms in (4, 8, 16, 32, 64, 128):
            row = self.sweep[ms]
            self.assertEqual("false", row["stalled"])
            rest = float(row["simulated_time"]) - ms * 1e-3
            if constant is None:
                constant = rest
            self.assertClose(constant, rest, rel=1e-9)
        # everything but the timeout: rounds 0-1, round 2's compute, the redone allreduce,
        # rounds 3-4 (and a few microseconds of the coordinator's messages)
        expected = 2 * (C + ring(3)) + C + ring(2) + 2 * (C + ring(2))
        self.assertClose(expected, constant, rel=1e-4)
        self.assertClose(138.07e-3, constant, rel=1e-4)
        self.assertQuoted("138.07 ms + timeout", "page")

    def test_timeouts_longer_than_a_slowed_step_leave_it_to_the_progress_score(self):
        self.assertClose(223.7e-3, step(3, F * B), rel=1e-4)
        self.assertQuoted("223.7 ms", "page")
        # no deadline passes; after 4 steps at 1% (round 2's whole allreduce) rank 2 is a
        # straggler, dropped as round 3 begins: the survivors hear it in their first step of
        # round 3 (since the fault struck, a wait listens for the verdict from its start) and
        # redo round 3 as two
        dropped_at = 2 * (C + ring(3)) + C + ring(3, F * B) + C
        total = dropped_at + ring(2) + C + ring(2)
        for ms in (256, 512):
            self.assertLess(step(3, F * B), ms * 1e-3)
            self.assertClose(total, float(self.sweep[ms]["simulated_time"]), rel=1e-5)
        self.assertClose(0.9927, dropped_at, rel=1e-4)
        self.assertClose(1.026, total, rel=1e-3)
        for figure in ("894.8 ms", "992.7 ms", "1.026 s"):
            self.assertQuoted(figure, "page")
            self.assertQuoted(figure, "answers")

    def test_64_ranks_a_straggler_by_score_is_dropped_when_it_pays(self):
        p, c, rounds = 64, C, 4
        healthy, slowed = step(p), step(p, 0.4 * B)
        self.assertClose(106.9e-6, healthy, rel=1e-3)
        self.assertClose(13.46e-3, ring(p), rel=1e-3)
        self.assertClose(320.7e-6, 3 * healthy, rel=1e-3)
        self.assertClose(264.1e-6, slowed, rel=1e-3)
        self.assertLess(slowed, 3 * healthy)          # no deadline passes
        self.assertClose(0.405, healthy / slowed, rel=2e-3)
        self.assertLess(healthy / slowed, 0.5)         # but the score is below the threshold
        start = c + ring(p) + c
        self.assertClose(53.46e-3, start, rel=1e-4)
        self.assertClose(54.52e-3, start + 4 * slowed, rel=1e-4)
        for figure in ("106.9 us", "13.46 ms", "320.7 us", "264.1 us", "0.405", "53.46 ms",
                       "53.46 + 4 x 0.2641 = 54.52 ms", "about 139 ms", "about 82 ms"):
            self.assertQuoted(figure, "page")
        trace = json.loads((OUT / "lab4-64-straggler.json").read_text())
        event = trace["recovery"][0]
        self.assertEqual([24], event["dropped_ranks"])
        self.assertClose(start + 4 * slowed, event["detected"], rel=2e-3)
        # the prediction: keep = rest of this allreduce + 2 rounds with rank 24's NIC at what it
        # carried in its slow steps (a chunk in a step less its latency: the bytes slower, the
        # latency the same); drop = a redone allreduce of 63 + 2 rounds (the model's chunks are
        # whole carried elements: within 5%)
        carried = (N / p) / (slowed - ALPHA)
        self.assertClose(0.4 * B, carried, rel=1e-9)
        keep = (1 - 4 / 126) * ring(p, carried) + (rounds - 2) * (c + ring(p, carried))
        drop = ring(p - 1) + (rounds - 2) * (c + ring(p - 1))
        self.assertClose(139e-3, keep, rel=1e-2)
        self.assertClose(keep, event["prediction"]["keep"], rel=0.02)
        self.assertClose(drop, event["prediction"]["drop"], rel=0.05)
        self.assertClose(82e-3, event["prediction"]["drop"], rel=1e-2)
        self.assertTrue(trace["summary"]["models_identical"])
        self.assertEqual([], trace["summary"]["recovery_quality"]["healthy_dropped"])
        self.assertIn("detected 54.5206 ms", self.outputs["collsim run scenarios/labs/lab4-64-straggler.json "
                                                           "--trace out/labs/lab4-64-straggler.json"])

    def test_64_ranks_a_4x_straggler_late_in_the_last_round_is_kept(self):
        p, rounds = 64, 4
        healthy, slowed = step(p), step(p, 0.25 * B)
        last_start = (rounds - 1) * (C + ring(p)) + C
        left = 126 - (131.5e-3 - last_start) / healthy
        self.assertClose(22, left, rel=0.01)
        extra = 22 * (slowed - healthy)
        self.assertClose(6.92e-3, extra, rel=1e-3)
        self.assertLess(extra, ring(p - 1) / 1.5)  # keeping is the cheaper, by far
        self.assertClose(133.86e-3, rounds * (C + ring(p)), rel=1e-4)
        self.assertClose(140.8e-3, rounds * (C + ring(p)) + extra, rel=1e-3)
        for figure in ("22 x (421.4 - 106.9) us = 6.92 ms", "133.86 + 6.92 = 140.8 ms", "about 14 ms"):
            self.assertQuoted(figure, "page")
        trace = json.loads((OUT / "lab4-64-late.json").read_text())
        self.assertEqual([[24]], [e["kept_ranks"] for e in trace["recovery"] if e.get("kept_ranks")])
        self.assertEqual([], [r for e in trace["recovery"] for r in e["dropped_ranks"]])
        self.assertClose(rounds * (C + ring(p)) + extra, trace["rounds"][-1]["end"], rel=2e-3)
        self.assertClose(14e-3, trace["recovery"][0]["prediction"]["drop"], rel=0.01)
        # kept on its first late step (421.4 us against a 320.7 us deadline): the rest, 22
        # steps at 4x, priced at what the NIC carried
        self.assertGreater(slowed, 3 * healthy)
        self.assertClose(22 * slowed, trace["recovery"][0]["prediction"]["keep"], rel=0.01)
        self.assertLess(trace["recovery"][0]["detected"], 131.5e-3 + 2 * slowed)
        for figure in ("421.4 us", "9.27 ms"):
            self.assertQuoted(figure, "page")

    def test_a_fixed_3ms_timeout_leaves_the_rebuilt_group_undecided(self):
        self.assertLess(step(3), 3e-3)
        self.assertLess(3e-3, step(2))
        self.assertClose(3.357e-3, step(2), rel=1e-3)
        self.assertQuoted("3.357 ms", "page")
        self.assertEqual(5, self.short["summary"]["rounds_completed"])
        self.assertNotIn("stalled", self.short["summary"])
        dropped, doubt = self.short["recovery"]
        self.assertEqual([2], dropped["dropped_ranks"])
        self.assertEqual([0, 1], doubt["undecided_ranks"])
        self.assertEqual([], doubt["dropped_ranks"])

    def test_a_preempted_worker_stalls_the_group_forever(self):
        command = "collsim run scenarios/faults/preempt-8-wait.json"
        self.assertIn("rounds done     1 of 4", self.outputs[command])

    def test_the_answers_quote_the_same_figures(self):
        # each of these is computed and asserted in the tests above
        for figure in ("4 x 2.2390 ms = 8.956 ms", "144.8 ms", "894.8 ms", "914.8 ms", "2.802 s", "2.658 s lost",
                       "57.91 ms", "77.91 ms", "6.717 ms", "84.63 ms", "6.715 ms", "26.71 ms", "144.78 ms",
                       "223.7 ms", "138.07 ms", "3.357 ms", "2.239 ms", "53.43 ms"):
            self.assertQuoted(figure, "answers")
        self.assertClose(53.43e-3, 2 * (C + ring(2)), rel=1e-3)
        self.assertClose(2.2390e-3, step(3), rel=1e-4)

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 3)


if __name__ == "__main__":
    unittest.main()
