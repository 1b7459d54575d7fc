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
        self.assertClose(26.87e-3, 3 * ring(3), rel=1e-3)
        self.assertClose(20.14e-3, 3 * ring(2), rel=1e-3)
        self.assertQuoted("26.87 ms", "page")
        self.assertQuoted("20.14 ms", "page")

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

    def test_rebuilding_detects_one_timeout_after_the_stalled_collective_began(self):
        recovery = self.rebuild["recovery"][0]
        started = 2 * (C + ring(3)) + C
        self.assertEqual([2], recovery["dropped_ranks"])
        # the first wait expires one timeout later; its report reaches the coordinator one
        # small message (alpha) after that
        self.assertClose(started + 3 * ring(3) + ALPHA, recovery["detected"])
        self.assertQuoted("77.91 ms", "page")
        self.assertQuoted("104.78 ms (77.91 + 26.87, plus the 2 us the report", "page")
        self.assertClose(104.78e-3, recovery["detected"], rel=1e-4)
        self.assertClose(recovery["resumed"] + ring(2), recovery["round_completed"])
        for later in self.rebuild["rounds"][3:]:
            self.assertClose(C + ring(2), later["end"] - later["start"])
        self.assertQuoted("26.71 ms", "page")
        summary = self.rebuild["summary"]
        self.assertClose(164.9e-3, summary["simulated_time"], rel=1e-3)
        self.assertClose(20.15e-3, summary["time_lost"], rel=1e-3)
        self.assertQuoted("164.9 ms: 20.15 ms lost", "page")
        # the whole rebuilt run ends before waiting gets through the first slowed round
        wait_round2_end = self.wait["rounds"][2]["end"]
        self.assertLess(summary["simulated_time"], wait_round2_end)
        self.assertTrue(summary["verified"] and summary["models_identical"])

    def test_timeouts_below_one_chunk_stop_the_run(self):
        for ms in (1, 2):
            self.assertLess(ms * 1e-3, step(3))
            self.assertEqual("true", self.sweep[ms]["stalled"])
            self.assertEqual("0", self.sweep[ms]["rounds_completed"])

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

    def test_timeouts_longer_than_a_slowed_step_never_fire(self):
        self.assertClose(223.7e-3, step(3, F * B), rel=1e-4)
        self.assertQuoted("223.7 ms", "page")
        for ms in (256, 512):
            self.assertLess(step(3, F * B), ms * 1e-3)
            self.assertClose(self.wait["summary"]["simulated_time"], float(self.sweep[ms]["simulated_time"]), rel=1e-9)

    def test_a_fixed_3ms_timeout_fails_the_rebuilt_group(self):
        self.assertLess(step(3), 3e-3)
        self.assertLess(3e-3, step(2))
        self.assertClose(3.357e-3, step(2), rel=1e-3)
        self.assertQuoted("3.357 ms", "page")
        self.assertEqual(2, self.short["summary"]["rounds_completed"])
        self.assertIn("stalled", self.short["summary"])
        self.assertEqual([2], self.short["recovery"][0]["dropped_ranks"])

    def test_a_preempted_worker_stalls_the_group_forever(self):
        command = "collsim run scenarios/faults/preempt-8-wait.json"
        self.assertIn("rounds done     1 of 4", self.outputs[command])

    def test_the_answers_quote_the_same_figures(self):
        # each of these is computed and asserted in the tests above
        for figure in ("4 x 2.2390 ms = 8.956 ms", "144.8 ms", "894.8 ms", "914.8 ms", "2.802 s", "2.658 s lost",
                       "57.91 ms", "77.91 ms", "26.87 ms", "104.78 ms", "6.715 ms", "26.71 ms", "164.9 ms",
                       "223.7 ms", "138.07 ms", "3.357 ms", "2.239 ms", "53.43 ms"):
            self.assertQuoted(figure, "answers")
        self.assertClose(53.43e-3, 2 * (C + ring(2)), rel=1e-3)
        self.assertClose(2.2390e-3, step(3), rel=1e-4)

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 3)


if __name__ == "__main__":
    unittest.main()
