"""Lab 4 (docs/labs/lab4-stalls-and-recovery.md): every command of the page runs, and every
figure it quotes is checked against the alpha-beta arithmetic written out here.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest test_lab4 -v   (from tests/cli)
"""
import csv
import json
import unittest

import labs_common

from labs_common import OUT, REPO, LabTest, figures_in_page, fmt_time, run_lab_commands
from labs_common import page_text as labs_common_page

PAGE = "lab4-stalls-and-recovery.md"
N, P, ALPHA, B, C, F = 64 * 2**20, 3, 2e-6, 10e9, 20e-3, 0.01


def ring(p, bandwidth=B):
    return 2 * (p - 1) * (ALPHA + N / (p * bandwidth))


def step(p, bandwidth=B):
    return ALPHA + N / (p * bandwidth)


def whole_ring(p, bandwidth=B):
    """The ring as collsim sends it: chunks of whole float32 elements, each step paced by
    the largest, ceil(N/4/p) elements (a few bytes more than N/p when p does not divide)."""
    return 2 * (p - 1) * (ALPHA + -(-(N // 4) // p) * 4 / bandwidth)


# the scenario's inputs (the fault's factor and time, the timeouts of the sweep, the
# questions' what-ifs), not results
GIVEN = {"1%", "10 GB/s", "3x", "4x", "2.5 times", "2.5x", "25%", "40%", "70%", "64 MiB", "20 ms", "300 ms", "128 ms",
         "256 ms", "512 ms", "131.5 ms", "10 s"}


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
        cls.page = figures_in_page(PAGE) + " " + labs_common.section_text('answers-lab4.md', "What the runs show")
        cls.answers = figures_in_page("answers-lab4.md")

    def test_background_figures(self):
        self.assertRounds("8.956 ms", ring(3))
        self.assertQuoted("T(3) = 8.956 ms", "page")
        self.assertRounds("2.239 ms", step(3))
        self.assertQuoted("2.239 ms", "page")
        self.assertRounds("894.8 ms", ring(3, F * B))
        self.assertQuoted("894.8 ms", "page")
        self.assertRounds("6.715 ms", ring(2))
        self.assertQuoted("6.715 ms", "page")
        self.assertRounds("6.717 ms", 3 * step(3))
        self.assertQuoted("3 x 2.239 ms = 6.717 ms", "page")

    def test_waiting_stretches_every_round_after_the_fault(self):
        self.assertRounds("100", ring(3, F * B) / ring(3))
        self.assertQuoted("their allreduces 100 times slower", "page")
        self.assertRounds("2.8 s", self.wait["summary"]["simulated_time"])
        # "simulated time" is the whole run; the mean collective per round has its own name
        output = self.outputs["collsim run scenarios/labs/lab4-slow-link-wait.json --baseline --trace out/labs/lab4-wait.json "
                              "--svg out/labs/lab4-wait.svg"]
        total = 2 * (C + ring(3)) + 3 * (C + ring(3, F * B))
        mean = (2 * ring(3) + 3 * ring(3, F * B)) / 5
        self.assertIn(f"simulated time   {fmt_time(total)} (the whole run, 5 rounds)", output)
        self.assertIn(f"collective time  {fmt_time(mean)} per round (one collective; the mean of 5 rounds)", output)
        # the model: the fault-free ring of whole elements (the largest chunk paces each step),
        # not compared with a mean of rounds the fault struck (issue 47: like with like)
        self.assertIn(f"model time       {fmt_time(whole_ring(3))} (fault-free; not compared: the rounds measured "
                      "include a fault, where the model is the fault-free collective)", output)
        self.assertQuoted("the timeline is 2.8 s long", "page")
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
        self.assertRounds("2.802 s", total)
        self.assertRounds("144.8 ms", 5 * (C + ring(3)))
        self.assertRounds("2.658 s", total - 5 * (C + ring(3)))

    def test_rebuilding_detects_three_chunks_after_the_stalled_collective_began(self):
        recovery = self.rebuild["recovery"][0]
        started = 2 * (C + ring(3)) + C
        # the picture's caption: the bar from the fault to its detection, compute then waiting
        fault = self.rebuild["faults"][0]["time"]
        for figure, value in (("57.9 ms", fault), ("84.6 ms", recovery["detected"]),
                              ("26.7 ms", recovery["detected"] - fault), ("6.7 ms", recovery["detected"] - started)):
            self.assertRounds(figure, value)
        self.assertClose(started - C, fault)
        self.assertQuoted("the fault at 57.9 ms; on the recovery strip, from the fault to its detection at 84.6 ms "
                          "(26.7 ms), a pale bar while round 2 computes (20 ms: nothing waits on the slow link yet), then "
                          "a yellow one while the first step's transfers wait for their deadline (6.7 ms, three chunks)",
                          "page")
        # ... and the report's recovery table says the same as the trace
        import re
        report = " ".join(re.sub(r"<[^>]+>", " ", (OUT / "lab4-rebuild.html").read_text()).split())
        keep, drop = recovery["prediction"]["keep"], recovery["prediction"]["drop"]
        self.assertIn(f"0 → 1 2 {fmt_time(fault)} {fmt_time(recovery['detected'])}", report)
        self.assertIn(f"dropped rank 2 every late or broken transfer involves it {fmt_time(keep)} {fmt_time(drop)}", report)
        self.assertQuoted(f"(keep {fmt_time(keep)}, drop {fmt_time(drop)})", "page")
        self.assertEqual([2], recovery["dropped_ranks"])
        # the first step's transfers with rank 2 pass their deadline, 3 chunks, together
        self.assertClose(started + 3 * step(3), recovery["detected"])
        self.assertQuoted("77.91 ms", "page")
        self.assertQuoted("84.63 ms (77.91 + 3 x 2.239)", "page")
        self.assertRounds("84.63 ms", recovery["detected"])
        # the last survivor resumes when its verdict arrives: a few control messages (alpha each) later
        self.assertLess(abs(recovery["resumed"] + ring(2) - recovery["round_completed"]), 3 * ALPHA)
        for later in self.rebuild["rounds"][3:]:
            self.assertClose(C + ring(2), later["end"] - later["start"])
        self.assertQuoted("26.71 ms", "page")
        summary = self.rebuild["summary"]
        # (plus the verdicts' trips: a few control messages of alpha each)
        self.assertLess(abs(started + 3 * step(3) + ring(2) + 2 * (C + ring(2)) - summary["simulated_time"]), 4 * ALPHA)
        self.assertRounds("144.78 ms", summary["simulated_time"])
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
        self.assertRounds("138.056 ms", expected, "answers")
        # ... and the verdict's one message (alpha) to the survivors
        self.assertRounds("2 us", constant - expected)
        self.assertRounds("138.058 ms", constant)
        self.assertQuoted("138.058 ms + timeout")
        for figure, value in (("57.912 ms", 2 * (C + ring(3))), ("6.715 ms", ring(2)), ("53.430 ms", 2 * (C + ring(2)))):
            self.assertRounds(figure, value, "answers")

    def test_timeouts_longer_than_a_slowed_step_leave_it_to_the_progress_score(self):
        self.assertRounds("223.7 ms", step(3, F * B))
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
        self.assertRounds("992.7 ms", dropped_at)
        self.assertRounds("1.026 s", total)
        for figure in ("894.8 ms", "992.7 ms", "1.026 s"):
            self.assertQuoted(figure, "page")
            self.assertQuoted(figure, "answers")

    def test_64_ranks_a_straggler_by_score_is_dropped_when_it_pays(self):
        p, c, rounds = 64, C, 4
        healthy, slowed = step(p), step(p, 0.4 * B)
        self.assertRounds("106.858 us", healthy, "page")
        self.assertRounds("13.46 ms", ring(p), "page")
        self.assertRounds("320.573 us", 3 * healthy, "page")
        self.assertRounds("262.144 us", slowed - ALPHA, "page")
        self.assertRounds("264.144 us", slowed, "page")
        self.assertLess(slowed, 3 * healthy)          # no deadline passes
        self.assertRounds("0.405", healthy / slowed, "page")
        self.assertLess(healthy / slowed, 0.5)         # but the score is below the threshold
        start = c + ring(p) + c
        self.assertRounds("13.464", ring(p) * 1e3)
        self.assertRounds("53.464 ms", start)
        self.assertRounds("0.264", slowed * 1e3)
        self.assertRounds("54.521 ms", start + 4 * slowed)
        for figure in ("20 + 13.464 + 20 = 53.464 ms", "53.464 + 4 x 0.264 = 54.521 ms", "about 139 ms", "about 80 ms",
                       "106.858/264.144 = 0.405"):
            self.assertQuoted(figure, "page")
        self.assertIn("timeout 3x (320.573 us per wait)", self.outputs["collsim run scenarios/labs/lab4-64-straggler.json "
                                                                      "--trace out/labs/lab4-64-straggler.json"])
        trace = json.loads((OUT / "lab4-64-straggler.json").read_text())
        event = trace["recovery"][0]
        self.assertEqual([24], event["dropped_ranks"])
        self.assertClose(start + 4 * slowed, event["detected"], rel=2e-3)
        # the prediction: keep = rest of this allreduce + 2 rounds with rank 24's NIC at what it
        # carried in its slow steps (a chunk in a step less its latency: the bytes slower, the
        # latency the same); drop = a redone allreduce of 63 + 2 rounds (the model's chunks are
        # whole elements, 64 MiB / 63 rounded up to one, the formula's fractional: within 1e-4)
        carried = (N / p) / (slowed - ALPHA)
        self.assertClose(0.4 * B, carried, rel=1e-9)
        keep = (1 - 4 / 126) * ring(p, carried) + (rounds - 2) * (c + ring(p, carried))
        drop = ring(p - 1) + (rounds - 2) * (c + ring(p - 1))
        self.assertRounds("139 ms", keep)
        self.assertClose(keep, event["prediction"]["keep"], rel=0.02)
        self.assertClose(drop, event["prediction"]["drop"], rel=1e-4)
        self.assertRounds("80 ms", event["prediction"]["drop"])
        self.assertTrue(trace["summary"]["models_identical"])
        self.assertEqual([], trace["summary"]["recovery_quality"]["healthy_dropped"])
        self.assertIn("detected 54.5206 ms", self.outputs["collsim run scenarios/labs/lab4-64-straggler.json "
                                                           "--trace out/labs/lab4-64-straggler.json"])

    def test_64_ranks_a_4x_straggler_late_in_the_last_round_is_kept(self):
        p, rounds = 64, 4
        healthy, slowed = step(p), step(p, 0.25 * B)
        last_start = (rounds - 1) * (C + ring(p)) + C
        left = 126 - (131.5e-3 - last_start) / healthy
        self.assertRounds("22", left)
        extra = 22 * (slowed - healthy)
        self.assertRounds("6.92 ms", extra)
        self.assertLess(extra, ring(p - 1) / 1.5)  # keeping is the cheaper, by far
        self.assertRounds("133.86 ms", rounds * (C + ring(p)))
        self.assertRounds("140.8 ms", rounds * (C + ring(p)) + extra)
        self.assertRounds("104.858 us", N / p / B)
        self.assertRounds("421.4 us", slowed)
        self.assertQuoted("2 us + 4 x 104.858 us = 421.4 us and passes its deadline (320.573 us)", "page")
        for figure in ("22 x (421.4 - 106.9) us = 6.92 ms", "133.86 + 6.92 = 140.8 ms", "about 13.5 ms"):
            self.assertQuoted(figure, "page")
        trace = json.loads((OUT / "lab4-64-late.json").read_text())
        self.assertEqual([[24]], [e["kept_ranks"] for e in trace["recovery"] if e.get("kept_ranks")])
        self.assertEqual([], [r for e in trace["recovery"] for r in e["dropped_ranks"]])
        self.assertClose(rounds * (C + ring(p)) + extra, trace["rounds"][-1]["end"], rel=2e-3)
        self.assertRounds("13.5 ms", trace["recovery"][0]["prediction"]["drop"])
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
        self.assertRounds("3.357 ms", step(2))
        self.assertQuoted("3.357 ms", "page")
        self.assertEqual(5, self.short["summary"]["rounds_completed"])
        self.assertNotIn("stalled", self.short["summary"])
        dropped, doubt = self.short["recovery"]
        self.assertEqual([2], dropped["dropped_ranks"])
        self.assertEqual([0, 1], doubt["undecided_ranks"])
        self.assertEqual([], doubt["dropped_ranks"])

    def test_a_preempted_worker_stalls_the_group_forever(self):
        command = "collsim run scenarios/faults/preempt-8-wait.json"
        self.assertIn("rounds done      1 of 4", self.outputs[command])
        self.assertIn("simulated time   25.5046 ms (the whole run, stalled after 1 of 4 rounds)", self.outputs[command])

    def test_the_answers_quote_the_same_figures(self):
        # each of these is computed and asserted in the tests above
        for figure in ("4 x 2.2390 ms = 8.956 ms", "144.8 ms", "894.8 ms", "914.8 ms", "2.802 s", "2.658 s lost",
                       "57.91 ms", "77.91 ms", "6.717 ms", "84.63 ms", "6.715 ms", "26.71 ms", "144.78 ms",
                       "223.7 ms", "138.058 ms", "3.357 ms", "2.239 ms"):
            self.assertQuoted(figure, "answers")
        self.assertRounds("2.2390 ms", step(3))
        self.assertRounds("26.71 ms", C + ring(2))
        self.assertRounds("57.91 ms", 2 * (C + ring(3)))
        self.assertRounds("77.91 ms", 2 * (C + ring(3)) + C)
        self.assertRounds("28.96 ms", C + ring(3))
        self.assertRounds("914.8 ms", C + ring(3, F * B))
        self.assertRounds("223.70 ms", step(3, F * B), "answers")
        # the rebuilding run ends this much before the waiting one
        self.assertRounds("2.658 s", self.wait["summary"]["simulated_time"] - self.rebuild["summary"]["simulated_time"],
                          "answers")

    def test_the_timeout_picture_has_its_two_reference_lines(self):
        import xml.etree.ElementTree as ET
        root = ET.parse(OUT / "lab4-timeout.svg").getroot()
        labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "reference-label"]
        fault_free, waiting = self.wait["summary"]["baseline_time"], self.wait["summary"]["simulated_time"]
        self.assertEqual(sorted([f"fault-free run: {fmt_time(fault_free)}", f"no recovery (policy none): {fmt_time(waiting)}"]),
                         sorted(labels))
        self.assertClose(5 * (C + ring(3)), fault_free)
        self.assertQuoted(f"the fault-free run ({fmt_time(fault_free)}) and waiting under policy `none` ({fmt_time(waiting)})",
                          "page")
        # every timeout lies between the two
        for row in self.sweep.values():
            self.assertLess(float(row["simulated_time"]), waiting)
            self.assertGreater(float(row["simulated_time"]), fault_free * 0.9)

    def test_the_printed_recoveries_are_the_commands_output(self):
        import re
        for name in ("straggler", "late"):
            command = f"collsim run scenarios/labs/lab4-64-{name}.json --trace out/labs/lab4-64-{name}.json"
            with self.subTest(command=command):
                (block,) = [b for b in re.findall(r"\n  ```\n(.*?)  ```", labs_common_page(PAGE), re.S)
                            if f"lab4-64-{name}" in command and ("dropped rank 24" in b) == (name == "straggler")]
                for line in block.splitlines():
                    self.assertIn(line.strip(), self.outputs[command])
                self.record(" ".join(block.split()))

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 3)


    def test_the_grading_sheet_grades_formula_answers(self):
        for student in ("alice", "dave"):
            with self.subTest(student=student):
                sheet, values = labs_common.student_sheet("lab4", student)
                n, b, f, c, timeout = (labs_common.si(values[k]) for k in ("n", "B", "f", "c", "T"))

                def ring_of(p, bandwidth=b):
                    return 2 * (p - 1) * (ALPHA + n / (p * bandwidth))

                healthy = 5 * (c + ring_of(3))
                # the rebuild: round 2's allreduce starts at 2 (c + T(3)) + c, is detected after
                # the wait's deadline, the verdict takes alpha, then T(2) and two rounds of two
                rebuilt = 2 * (c + ring_of(3)) + c + ALPHA + ring_of(2) + 2 * (c + ring_of(2))
                answers = {"q1": healthy, "q2": 2 * (c + ring_of(3)) + 3 * (c + ring_of(3, f * b)),
                           "q3": rebuilt + 3 * (ALPHA + n / (3 * b)), "q6": rebuilt + timeout}
                printed = {run: labs_common.summary(labs_common.run_sheet_command(sheet, run), "simulated time")
                           for run in ("healthy", "wait", "rebuild")}
                answers["q4"] = printed["wait"] - printed["healthy"]
                answers["q5"] = printed["wait"] / printed["rebuild"]
                self.assertClose(answers["q2"] - healthy, answers["q4"], rel=1e-3)
                self.assertGradedRight("lab4", student, answers)
                self.assertGradedWrong("lab4", student, answers, "q3", 1.015)

    def test_zz_every_figure_is_checked(self):
        # runs last (unittest sorts by name): every other test has recorded what it checked
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
