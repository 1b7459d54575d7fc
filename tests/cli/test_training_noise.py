"""training.noise: seeded compute jitter per rank and iteration. Each rank's forward and
backward in each round must last its nominal time times the factor that an independent
implementation of the documented draw gives (splitmix64 of (seed, rank, round), Box-Muller),
the same scenario must give the same times to the last digit, and the tail and scaling
figures must follow from the rounds.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_training_noise
"""
import math
import unittest

from test_training import P, TrainingRun, ring

MASK = (1 << 64) - 1
F, BK = 4e-3, 8e-3
N = 4194304 * 4
LAYERS = {"uniform": {"count": 4, "parameters": 4194304, "forward": "4ms", "backward": "8ms"}}


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def unit(bits):
    return (bits >> 11) * 2.0 ** -53


def standard_normal(seed, rank, round_):
    key = splitmix64(seed ^ 0x6E6F697365) ^ splitmix64((rank << 32) | round_)
    u1 = 1 - unit(splitmix64(key))
    u2 = unit(splitmix64((key + 1) & MASK))
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def lognormal(sigma, seed, rank, round_):
    return math.exp(sigma * standard_normal(seed, rank, round_) - sigma * sigma / 2)


def tail_uniform(seed, rank, round_):
    return unit(splitmix64(splitmix64(seed ^ 0x7461696C) ^ splitmix64((rank << 32) | round_)))


def table_factor(table, u):
    """The documented quantile function: linear between the table's points."""
    for (p0, f0), (p1, f1) in zip(table, table[1:]):
        if u <= p1:
            return f1 if p1 <= p0 else f0 + (f1 - f0) * (u - p0) / (p1 - p0)
    return table[-1][1]


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


class Noise(TrainingRun):
    def run_noise(self, noise, rounds=3, seed=7, workers=P, **extra):
        training = {"layers": LAYERS, "rounds": rounds, "noise": noise, **extra}
        return self.run_training(training, workers=workers, seed=seed)

    def test_each_ranks_compute_is_stretched_by_its_own_draw(self):
        sigma, seed = 0.2, 7
        trace = self.run_noise({"distribution": "lognormal", "sigma": sigma}, seed=seed)
        self.assertTrue(trace["summary"]["verified"])
        for rank in range(P):
            for round_ in range(3):
                mine = [a for a in trace["activities"]
                        if a["rank"] == rank and a["round"] == round_ and a["lane"] == "compute"]
                took = sum(a["end"] - a["start"] for a in mine)
                self.assertClose((F + BK) * lognormal(sigma, seed, rank, round_), took, rel=1e-9)
        # one bucket: each round is the slowest rank's compute, then the ring
        first = trace["rounds"][0]
        slowest = max(lognormal(sigma, seed, r, 0) for r in range(P))
        self.assertClose((F + BK) * slowest, first["compute"], rel=1e-9)

    def test_the_same_seed_gives_the_same_times_and_another_seed_others(self):
        noise = {"distribution": "normal", "sigma": 0.1}
        a, b = self.run_noise(noise, seed=3), self.run_noise(noise, seed=3)
        c = self.run_noise(noise, seed=4)
        self.assertEqual([r["end"] for r in a["rounds"]], [r["end"] for r in b["rounds"]])
        self.assertEqual(a["summary"]["simulated_time"], b["summary"]["simulated_time"])
        self.assertNotEqual(a["summary"]["simulated_time"], c["summary"]["simulated_time"])

    def test_a_table_with_one_factor_stretches_every_rank_alike(self):
        trace = self.run_noise({"distribution": "table", "table": [[0, 1.25], [1, 1.25]]}, rounds=2)
        s = trace["summary"]
        self.assertClose(1.25 * (F + BK) + ring(N), s["iteration_time"])
        self.assertClose((F + BK) / s["iteration_time"], s["scaling_efficiency"] / 1.25)

    def test_a_measured_tail_draws_each_ranks_factor_from_its_quantile_function(self):
        # the page's example table: each rank's compute in each round is its nominal time times
        # the quantile function at its own uniform draw (a hash of seed, rank, round); the mean
        # factor, the area under the quantile function, is 0.5 (0.98 + 1)/2 + 0.49 (1 + 1.1)/2
        # + 0.01 (1.1 + 1.5)/2 = 1.0225, what one worker computes on average: scaling_efficiency
        # is T1 = 1.0225 (F + BK) over the mean iteration
        table, seed, rounds = [[0, 0.98], [0.5, 1.0], [0.99, 1.1], [1, 1.5]], 11, 4
        trace = self.run_noise({"distribution": "table", "table": table}, rounds=rounds, seed=seed)
        self.assertTrue(trace["summary"]["verified"])
        for rank in range(P):
            for round_ in range(rounds):
                mine = [a for a in trace["activities"]
                        if a["rank"] == rank and a["round"] == round_ and a["lane"] == "compute"]
                took = sum(a["end"] - a["start"] for a in mine)
                self.assertClose((F + BK) * table_factor(table, tail_uniform(seed, rank, round_)), took, rel=1e-9)
        s = trace["summary"]
        mean = 0.5 * (0.98 + 1) / 2 + 0.49 * (1 + 1.1) / 2 + 0.01 * (1.1 + 1.5) / 2
        self.assertClose(1.0225, mean)
        self.assertClose(mean * (F + BK) / s["iteration_time"], s["scaling_efficiency"])

    def test_tail_and_scaling_follow_from_the_rounds(self):
        trace = self.run_noise({"distribution": "lognormal", "sigma": 0.3}, rounds=20)
        s = trace["summary"]
        iterations = [r["end"] - r["start"] for r in trace["rounds"]]
        self.assertEqual(nearest_rank(iterations, 0.5), s["iteration_p50"])
        self.assertEqual(nearest_rank(iterations, 0.99), s["iteration_p99"])
        self.assertEqual(max(iterations), s["iteration_p99"])  # 20 rounds: the 99th percentile is the last
        self.assertClose((F + BK) / s["iteration_time"], s["scaling_efficiency"])

    def test_without_noise_one_worker_scales_perfectly(self):
        trace = self.run_training({"layers": LAYERS, "rounds": 2}, workers=1)
        self.assertClose(1.0, trace["summary"]["scaling_efficiency"])
        self.assertEqual(trace["summary"]["iteration_p50"], trace["summary"]["iteration_p99"])


class BadNoise(TrainingRun):
    def assert_refused(self, noise, fragment):
        run = self.run_training({"layers": LAYERS, "noise": noise}, expect=2)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), run.stderr)
        self.assertIn(fragment, lines[0])

    def test_unknown_distribution(self):
        self.assert_refused({"distribution": "gauss", "sigma": 0.1}, "training.noise.distribution: unknown distribution")

    def test_missing_sigma(self):
        self.assert_refused({"distribution": "lognormal"}, "training.noise.sigma: missing")

    def test_sigma_out_of_range(self):
        self.assert_refused({"distribution": "normal", "sigma": 2}, "training.noise.sigma: must be a number from 0 to 1")

    def test_table_not_from_0_to_1(self):
        self.assert_refused({"distribution": "table", "table": [[0.1, 1], [1, 1.2]]}, "must start at probability 0")

    def test_table_out_of_order(self):
        self.assert_refused({"distribution": "table", "table": [[0, 1.2], [0.5, 1.0], [1, 1.3]]}, "training.noise.table.1")

    def test_sigma_with_a_table(self):
        self.assert_refused({"distribution": "table", "sigma": 0.1, "table": [[0, 1], [1, 1]]},
                            "training.noise.sigma: not a parameter")


if __name__ == "__main__":
    unittest.main()
