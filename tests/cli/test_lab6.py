"""Lab 6 (docs/labs/lab6-gpu-clusters.md): the page's commands run as a student runs them,
and every figure the page and its answers (answers-lab6.md) quote is checked against the
runs and against the rail formulas written out here (docs/topologies.md, "GPU cluster on
rails"); the picture is the commands' output; the grading sheet (docs/labs/grading/lab6.json)
grades right the answers a student computes from these formulas and reads off the runs.

    COLLSIM=build/collsim python3 -m unittest test_lab6 -v   (from tests/cli)
"""
import re
import unittest

import labs_common
from labs_common import summary
from labs_common import COLLSIM, fmt_time, rows_of

PAGE = "lab6-gpu-clusters.md"
ANSWERS = "answers-lab6.md"
N_BYTES = 2**30
G = 8                                   # GPUs per DGX server
NVLINK, NIC = 450e9, 50e9               # H100: NVLink 4 per GPU and direction; ConnectX-7 400 Gbit/s
A100_NVLINK, A100_NIC = 300e9, 25e9     # A100: NVLink 3; ConnectX-6 200 Gbit/s
ALPHA_NV, ALPHA_RAIL, ALPHA_CROSS = 1e-6, 4e-6, 8e-6


def one_server(n=N_BYTES, nvlink=NVLINK):
    return 2 * (G - 1) * (ALPHA_NV + n / G / nvlink)


def ring(servers, oversub=1, channels=1, n=N_BYTES):
    p = G * servers
    return 2 * (p - 1) * (ALPHA_CROSS + oversub * n / (channels * p * NIC))


def rail_rings(servers, n=N_BYTES, nic=NIC):
    return 2 * (servers - 1) * (ALPHA_RAIL + n / (G * servers * nic))


def hierarchical(servers, n=N_BYTES, nvlink=NVLINK, nic=NIC):
    return one_server(n, nvlink) + rail_rings(servers, n, nic)


# NCCL's transport on NVLink (docs/nccl.md): 25/20.6 wire bytes per byte; the ring 8.4 us once
# and 3.4 us a hop; NVLS 25 us once, at 85% of the link (nvlsEfficiency, Hopper)
WIRE, NVLS_EFFICIENCY = 25 / 20.6, 0.85
NVLS_STEP = 16 * 128 * 2**10  # the largest chunk, 128 KiB, on each of NCCL's 16 NVLS channels


def nccl_ring(n=N_BYTES):
    return 8.4e-6 + 2 * (G - 1) * (3.4e-6 + n / G * WIRE / NVLINK)


def nvls_port_bytes(n):
    """NVLS at its efficiency if a GPU's (1 + 1/g) n streamed through its port."""
    return 25e-6 + (1 + 1 / G) * n * WIRE / NVLS_EFFICIENCY / NVLINK


def nvls_one_chunk(chunk):
    """One chunk per channel (`chunk` bytes over the channels): the chunk up, its slice down,
    the slice up, the chunk down, one after the other."""
    return 25e-6 + (2 * chunk + 2 * chunk / G) * WIRE / NVLS_EFFICIENCY / NVLINK


def busbw(p, t, n=N_BYTES):
    return 2 * (p - 1) / p * n / t


# the hardware and the size: inputs, not results
GIVEN = {"400 Gbit/s", "200 Gbit/s", "0.5 us", "1 us", "4 us", "8 us", "450 GB/s", "300 GB/s", "50 GB/s", "25 GB/s", "1 GiB",
         "128 KiB", "64 KiB", "8 KiB", "25 us", "8.4 us", "3.4 us", "85%"}


class Lab6(labs_common.LabTest):
    @classmethod
    def setUpClass(cls):
        cls.outputs = list(labs_common.run_lab_commands(PAGE).values())
        cls.page = labs_common.figures_in_page(PAGE)
        cls.answers = labs_common.figures_in_page(ANSWERS)
        cls.rows = {(int(r["workers"]), r["collective.algorithm"], int(r["collective.channels"])): r
                    for r in rows_of("lab6.csv")}

    def time(self, index):
        return summary(self.outputs[index], "simulated time")

    def assertPrinted(self, want, index):
        """The run's summary prints `want` to its six digits."""
        self.assertRounds(fmt_time(want), self.time(index))

    def test_one_server_is_nvlink(self):
        t = one_server()
        self.assertPrinted(t, 0)
        self.assertIn(f"14 (1 us + {N_BYTES / G / 1e6:.3f} MB / 450 GB/s) = {fmt_time(t)}", self.answers)
        self.assertRounds("448.5 GB/s", busbw(8, t), "answers")
        self.assertIn("busbw           448.5 GB/s", self.outputs[0])
        self.assertIn(f"less the {2 * (G - 1) * ALPHA_NV * 1e6:.0f} us of latency", self.answers)

    def test_one_ring_waits_for_the_crossing(self):
        t = ring(4)
        self.assertPrinted(t, 1)
        step = ALPHA_CROSS + N_BYTES / 32 / NIC
        self.assertIn(f"8 us + {N_BYTES / 32 / 1e6:.4f} MB / 50 GB/s = {fmt_time(step)} per step against "
                      f"{fmt_time(ALPHA_NV + N_BYTES / 32 / NVLINK)} on NVLink", self.answers)
        self.assertIn(f"62 steps: {fmt_time(t)}, {t / one_server():.1f} times one server's time", self.answers)
        self.assertRounds("49.41 GB/s", summary(self.outputs[1], "busbw"), "answers")
        self.assertRounds("49.41 GB/s", busbw(32, t))

    def test_eight_channels(self):
        t = ring(4, channels=8)
        self.assertPrinted(t, 2)
        self.assertIn(f"{fmt_time(t)}, {ring(4) / t:.2f} times faster than one ring", self.answers)
        self.assertIn(f"({62 * ALPHA_CROSS * 1e6:.0f} us of latency)", self.answers)

    def test_hierarchical_against_channels(self):
        t = hierarchical(4)
        self.assertPrinted(t, 3)
        self.assertLess(ring(4, channels=8), t)
        self.assertIn(f"{fmt_time(ring(4, channels=8))} against {fmt_time(t)}", self.answers)
        self.assertIn(f"NVLink phases ({fmt_time(one_server())}, all of one server's ring) and its rail rings "
                      f"({fmt_time(rail_rings(4))})", self.answers)

    def test_oversubscription_spares_the_rails(self):
        channels, hier = ring(4, oversub=4, channels=8), hierarchical(4)
        self.assertPrinted(channels, 4)
        self.assertPrinted(hier, 5)
        self.assertEqual(summary(self.outputs[3], "simulated time"), summary(self.outputs[5], "simulated time"))
        self.assertIn(f"12.5 GB/s each, and the channels take {fmt_time(channels)}", self.answers)
        self.assertIn(f"does not change at all ({fmt_time(hier)})", self.answers)
        self.assertIn(f"Now it is {channels / hier:.2f} times faster", self.answers)

    def test_a100(self):
        t = hierarchical(4, nvlink=A100_NVLINK, nic=A100_NIC)
        self.assertPrinted(t, 6)
        self.assertIn(f"from {fmt_time(one_server())} to {fmt_time(one_server(nvlink=A100_NVLINK))}", self.answers)
        self.assertIn(f"from {fmt_time(rail_rings(4))} to {fmt_time(rail_rings(4, nic=A100_NIC))} (the NIC halved): "
                      f"{fmt_time(t)}", self.answers)

    def test_nccl_choice(self):
        out = self.outputs[7]
        self.assertIn("NCCL's tuner chose Ring/Simple on 16 channels", out)
        t = self.time(7)
        self.assertGreater(t, ring(4, channels=8))
        self.assertIn(f"Ring/Simple on 16 channels, {fmt_time(t)}", self.answers)

    def test_the_sweep_and_its_flat_lines(self):
        for servers in (1, 2, 4, 8):
            p = G * servers
            for algorithm, channels, want in (("ring", 1, ring(servers, 4)), ("ring", 8, ring(servers, 4, 8)),
                                              ("hierarchical", 1, hierarchical(servers))):
                if servers == 1:
                    want = one_server()
                with self.subTest(p=p, algorithm=algorithm, channels=channels):
                    row = self.rows[(p, algorithm, channels)]
                    self.assertEqual("true", row["verified"])
                    self.assertClose(want, float(row["collective_time"]))
        # "near one NIC's share": 12.5 GB/s for one ring, 100 GB/s for eight, within 5% from 2 servers on
        for servers in (2, 4, 8):
            for channels, share in ((1, 12.5e9), (8, 100e9)):
                bw = float(self.rows[(G * servers, "ring", channels)]["busbw"])
                self.assertLess(abs(bw / share - 1), 0.05, (servers, channels, bw))
        self.assertIn("(12.5 GB/s for one ring at 4:1, 100 GB/s for 8 of them)", self.answers)
        plot = (labs_common.OUT / "lab6-servers.svg").read_text()
        self.assertEqual(2, plot.count('class="reference"'))

    def test_nvls_against_nccls_ring(self):
        ring_out, nvls_out, chunk_out = self.outputs[-3:]
        self.assertPrinted(nccl_ring(), -3)
        self.assertIn(f"8.4 us + 14 (3.4 us + {N_BYTES / G / 1e6:.3f} MB x 25/20.6 / 450 GB/s) = {fmt_time(nccl_ring())}",
                      self.answers)
        self.assertRounds("366.7 GB/s", busbw(8, nccl_ring()), "answers")
        self.assertRounds("366.7 GB/s", summary(ring_out, "busbw"))
        ports = 2 * (G - 1) / G / (1 + 1 / G)
        self.assertIn(f"1.125 n, {ports:.2f} times less; at its 85% efficiency that leaves it "
                      f"{ports * NVLS_EFFICIENCY:.2f} times faster", self.answers)
        self.assertIn(f"25 us + 1.125 n x 25/20.6 / 0.85 / 450 GB/s = {nvls_port_bytes(N_BYTES) * 1e3:.5g} ms", self.answers)
        # the run: priced by the schedule as simulated, checked against the two formulas' bounds
        nvls = summary(nvls_out, "simulated time")
        self.assertIn("simulated/model = 1.000000", nvls_out)
        self.assertGreater(nvls, nvls_port_bytes(N_BYTES))
        # ... and faster than every 1 MiB step's four phases one after the other
        self.assertLess(nvls, (N_BYTES / NVLS_STEP) * nvls_one_chunk(NVLS_STEP))
        self.assertIn(f"The run takes {fmt_time(nvls)} (busbw {summary(nvls_out, 'busbw') / 1e9:.1f} GB/s), "
                      f"{nccl_ring() / nvls:.2f} times faster than the ring: "
                      f"{100 * (nvls / nvls_port_bytes(N_BYTES) - 1):.0f}% above that figure", self.answers)
        self.assertRounds(f"{summary(nvls_out, 'busbw') / 1e9:.1f} GB/s", busbw(8, nvls))
        # the published figure (docs/validation.md, R2: 1 x 8 H100, NCCL_ALGO=NVLS, 1 GiB)
        validation = (labs_common.REPO / "docs" / "validation.md").read_text()
        published = re.search(r"### R2:.*?\n\| 1 GiB \| ([0-9.]+) GB/s", validation, re.S).group(1)
        self.assertIn(f"reaches {published} GB/s busbw with NVLS at 1 GiB", self.answers)
        self.assertIn(f"collsim's run is {busbw(8, nvls) / float(published) / 1e9:.2f} of it", self.answers)

    def test_nvls_one_chunk(self):
        n = 64 * 2**10
        t = nvls_one_chunk(n)
        self.assertPrinted(t, -1)
        self.assertIn(f"25 us + (2 x 64 KiB + 2 x 8 KiB) x 25/20.6 / 0.85 / 450 GB/s = {fmt_time(t)}", self.answers)
        self.assertIn(f"{fmt_time(t - 25e-6)} of transfers behind 25 us", self.answers)
        self.assertRounds("4.503 GB/s", busbw(8, t, n), "answers")
        self.assertRounds("4.503 GB/s", summary(self.outputs[-1], "busbw"))

    def test_the_grading_sheet_grades_formula_answers_right(self):
        for student in ("alice", "erin"):
            with self.subTest(student=student):
                self.assert_graded_right(student)

    def assert_graded_right(self, student):
        sheet, values = labs_common.student_sheet("lab6", student)
        servers, oversub = int(values["N"]), int(values["k"])
        n = labs_common.si(values["n"])
        answers = {"q1": ring(servers, oversub, 1, n), "q2": ring(servers, oversub, 8, n),
                   "q3": hierarchical(servers, n)}
        answers["q7"] = nccl_ring(n)
        printed = {run: labs_common.run_sheet_command(sheet, run) for run in ("channels", "hier", "nccl_ring", "nvls")}
        answers["q8"] = summary(printed["nccl_ring"], "simulated time") / summary(printed["nvls"], "simulated time")
        # NVLS is faster than NCCL's ring, less than its 1.75/1.125 port bytes and efficiency allow
        self.assertTrue(1 < answers["q8"] < 2 * (G - 1) / G / (1 + 1 / G) * NVLS_EFFICIENCY, answers["q8"])
        answers["q4"] = summary(printed["channels"], "simulated time") / summary(printed["hier"], "simulated time")
        answers["q5"] = summary(printed["hier"], "busbw")
        answers["q6"] = summary(printed["channels"], "busbw")
        self.assertClose(answers["q2"] / answers["q3"], answers["q4"], rel=1e-4)
        self.assertGradedRight("lab6", student, answers)
        self.assertGradedWrong("lab6", student, answers, "q3", 1.012)

    def test_pictures_are_the_commands_output(self):
        self.assertPicturesCurrent(PAGE, 1)

    def test_zz_every_figure_is_checked(self):
        self.assertEveryFigureChecked("page", GIVEN)
        self.assertEveryFigureChecked("answers", GIVEN)


if __name__ == "__main__":
    unittest.main()
