"""Whole variables on parameter servers (collective.parameter_server.variables): each tensor of
the model lives whole on one server, placed round-robin (tf.train.replica_device_setter's
default) or on the least loaded server so far (tf_cnn_benchmarks' ParamServerDeviceSetter).
A server's load is the sum of its variables, and the most loaded server bounds the round:
on a star of latency 0 with p workers and dedicated servers, each server's down link (push)
and up link (pull) carry p copies of its load while every worker's links stay below B, so
an iteration is its compute plus 2 p max_s(load_s) / B. Loads are placed here in Python from
the models' architectures (test_presets' tables), not read from collsim.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_server_variables
"""
import unittest

from test_presets import inception_v3_convs, vgg16_count_and_macs
from test_training import TrainingRun

B = 10e9


def round_robin(sizes, servers):
    loads = [0] * servers
    for v, size in enumerate(sizes):
        loads[v % servers] += size
    return loads


def least_loaded(sizes, servers):
    loads = [0] * servers
    for size in sizes:
        loads[loads.index(min(loads))] += size  # the first of equals
    return loads


def vgg16_tensors():
    """torchvision's vgg16 parameters in order: each conv's weight and bias, each fc's."""
    tensors, inputs = [], 3
    for convs, channels in [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)]:
        for _ in range(convs):
            tensors += [9 * inputs * channels, channels]
            inputs = channels
    for fan_in, fan_out in [(25088, 4096), (4096, 4096), (4096, 1000)]:
        tensors += [fan_in * fan_out, fan_out]
    return tensors


def inception_v3_tensors():
    """torchvision's inception_v3 parameters in order (its auxiliary classifier after Mixed_6e):
    each BasicConv2d's weight and batch norm weight and bias, then each fc's weight and bias."""
    tensors = []
    for module, kh, kw, cin, cout, _ in inception_v3_convs():
        tensors += [kh * kw * cin * cout, cout, cout]
        if module == "aux" and kh == 5:
            tensors += [768 * 1000, 1000]  # AuxLogits.fc
    return tensors + [2048 * 1000, 1000]


LOOPBACK = 10e9  # SimGrid's network/loopback-bw: a push or pull between a worker and the server beside it


def max_min_rates(flows, links_of, capacity):
    """Max-min fair rates (progressive filling): the link with the smallest fair share fixes
    the rate of every flow crossing it, its flows leave, the others' capacities shrink."""
    rate, unfixed, left = {}, set(flows), dict(capacity)
    while unfixed:
        share, link = min((c / n, l) for l, c in left.items()
                          if (n := sum(1 for f in unfixed if l in links_of[f])) > 0)
        for f in [f for f in unfixed if link in links_of[f]]:
            rate[f] = share
            unfixed.discard(f)
            for other in links_of[f]:
                left[other] -= share
        del left[link]
    return rate


def push_then_pull(p, loads, B, loopback):
    """One synchronous push and pull of whole variables on one-GPU nodes (links of B up and down,
    no latency), server s beside worker s holding loads[s] bytes: every worker pushes loads[s] to
    each server at once; server s answers once every push into it is in, worker r takes its pulls
    once its own pushes have left (a transfer starts when both ends are ready). A worker's push to
    the server beside it, and its pull, cross the loopback alone. Returns when the last pull ends."""
    capacity = {f"{d}{r}": B for r in range(p) for d in ("up", "down")}
    links_of, left = {}, {}

    def start(flow, src, dst, size):
        if src == dst:
            capacity[flow] = loopback
            links_of[flow] = [flow]
        else:
            links_of[flow] = [f"up{src}", f"down{dst}"]
        left[flow] = size

    for s, load in enumerate(loads):
        for r in range(p):
            start(("push", r, s), r, s, load)
    active, now = set(left), 0.0
    while active:
        rate = max_min_rates(active, links_of, capacity)
        step = min(left[f] / rate[f] for f in active)
        now += step
        for f in list(active):
            left[f] -= rate[f] * step
            if left[f] <= 1e-9 * rate[f] * step:
                active.discard(f)
        pushing = {f for f in active if f[0] == "push"}
        for s, load in enumerate(loads):
            for r in range(p):
                flow = ("pull", s, r)
                server_ready = not any(f[2] == s for f in pushing)
                worker_ready = not any(f[1] == r for f in pushing)
                if flow not in left and server_ready and worker_ready:
                    start(flow, s, r, load)
                    active.add(flow)
    return now


def layers(*parameters):
    """Layers given by hand: each one variable, no compute."""
    return [{"name": f"l{i}", "parameters": n} for i, n in enumerate(parameters)]


class WholeVariables(TrainingRun):
    def run_servers(self, training, workers, servers, variables, topology, placement="dedicated", **deployment):
        collective = {"algorithm": "parameter-server",
                      "parameter_server": {"placement": placement, "variables": variables, **deployment}}
        if placement == "dedicated":
            collective["parameter_server"]["hosts"] = [f"host-{workers + s}" for s in range(servers)]
        else:
            collective["servers"] = servers
        return self.run_training(training, workers=workers, topology=topology, collective=collective)

    def test_three_layers_on_two_servers_the_most_loaded_bounds_the_round(self):
        # 4 workers, 2 dedicated servers; variables of 12, 4 and 4 MB (float32). Round-robin:
        # server 0 holds 12 + 4 MB; least-loaded: 12 MB, the other 4 + 4 MB; split: 10 MB each.
        sizes = [3_000_000, 1_000_000, 1_000_000]
        p, servers = 4, 2
        training = {"layers": layers(*sizes), "bucket": "1GiB"}
        for variables, loads in (("round-robin", [4_000_000, 1_000_000]), ("least-loaded", [3_000_000, 2_000_000]),
                                 ("split", [2_500_000, 2_500_000])):
            with self.subTest(variables=variables):
                trace = self.run_servers(training, p, servers, variables, "star:6:10GBps:0us")
                s = trace["summary"]
                self.assertTrue(s["verified"], s)
                self.assertClose(2 * p * 4 * max(loads) / B, s["iteration_time"])
                parameters = trace["plan"]["algorithm"]["parameters"]["parameter_server"]
                if variables != "split":
                    self.assertEqual(parameters["variables"], variables)
                    self.assertEqual(parameters["server_elements"], loads)
                    # one push and one pull per worker and server: a server's variables go packed
                    self.assertEqual(s["message_count"], 2 * p * servers)
                else:
                    self.assertNotIn("variables", parameters)

    def test_latencies_never_let_a_flow_beat_its_links(self):
        # Links with latency (1 us per device link, 3 us per NIC: a route crosses 2 of each),
        # 4 workers, 3 dedicated servers holding 4, 8 and 12 MB: every worker's three pushes
        # start together, their latencies end together, and each server's down link shares
        # its 4 pushes (2.5 GB/s each; a worker's up link carries 7.5 of its 10 GB/s). The
        # pushes of 12 MB end at 4 x 12 MB / B + the route's latency, the pulls start then
        # (a worker pulls once its own pushes have left) and take as long again. SimGrid's
        # selective update (network/optim:Lazy) ended the 8 MB pushes at 2.42 ms instead of
        # 3.2 and the iteration at 8.816 ms instead of 9.616 ms: collsim runs without it.
        sizes = [1_000_000, 2_000_000, 3_000_000]
        p, servers, route_latency = 4, 3, 2 * 1e-6 + 2 * 3e-6
        loads = round_robin(sizes, servers)
        training = {"layers": layers(*sizes), "bucket": "1GiB"}
        collective = {"algorithm": "parameter-server",
                      "parameter_server": {"placement": "dedicated", "variables": "round-robin",
                                           "hosts": [f"node-{p + s}-dev-0" for s in range(servers)]}}
        trace = self.run_training(training, workers=p, topology="nodes:7:1:10GBps:10GBps:1us:3us",
                                  collective=collective)
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertClose(2 * (p * 4 * max(loads) / B + route_latency), s["iteration_time"])

    def test_vgg16_variables_on_three_servers(self):
        # VGG-16's 32 tensors (fc6's 102.8 M parameters alone make a server's load) on 3
        # dedicated servers, one bucket: forward 1 ms, backward 2 ms, then the push and pull
        tensors = vgg16_tensors()
        self.assertEqual(sum(tensors), vgg16_count_and_macs()[0])
        p, servers = 4, 3
        training = {"layers": {"preset": "vgg-16", "forward": "1ms", "backward": "2ms"}, "bucket": "64GiB"}
        for variables, place in (("round-robin", round_robin), ("least-loaded", least_loaded)):
            with self.subTest(variables=variables):
                loads = place(tensors, servers)
                trace = self.run_servers(training, p, servers, variables, "star:7:10GBps:0us")
                s = trace["summary"]
                self.assertTrue(s["verified"], s)
                self.assertEqual(trace["plan"]["algorithm"]["parameters"]["parameter_server"]["server_elements"], loads)
                self.assertClose(3e-3 + 2 * p * 4 * max(loads) / B, s["iteration_time"], rel=1e-6)
                self.assertEqual(s["message_count"], 2 * p * servers)

    def test_piz_daint_reduced_least_loaded_inception(self):
        # test_published_scaling's Piz Daint case (4 one-GPU nodes, PCIe 3.0 x16 both hops,
        # servers beside ranks 0-2), Inception V3's 292 tensors placed as tf_cnn_benchmarks
        # places them, links without latency (max-min sharing alone: push_then_pull below). The
        # servers' loads differ, so the flows do not all end at once: a server answers once its
        # pushes are in, a worker takes its pulls once its own pushes have left, and the early
        # pulls share the down link of the node whose server still receives.
        p, servers, B = 4, 3, 15.75e9
        tensors = inception_v3_tensors()
        self.assertEqual(len(tensors), 292)
        loads = least_loaded(tensors, servers)
        training = {"layers": {"preset": "inception-v3", "forward": "10ms", "backward": "20ms"}, "bucket": "64GiB"}
        topology = f"nodes:{p}:1:15.75GBps:15.75GBps:0us:0us"
        trace = self.run_servers(training, p, servers, "least-loaded", topology, placement="shared")
        s = trace["summary"]
        self.assertEqual(trace["plan"]["algorithm"]["parameters"]["parameter_server"]["server_elements"], loads)
        self.assertTrue(s["verified"])
        want = 30e-3 + push_then_pull(p, [4 * load for load in loads], B, LOOPBACK)
        self.assertClose(want, s["iteration_time"], rel=1e-9)
        # the busiest server alone (its p - 1 pushes and pulls at B / (p - 1)) is not the answer:
        # the early pulls slow its pushes down
        self.assertGreater(want, 30e-3 + 2 * (p - 1) * 4 * max(loads) / B)
        even = self.run_servers(training, p, servers, "split", topology, placement="shared")
        self.assertGreater(s["iteration_time"], even["summary"]["iteration_time"])

    def test_buckets_carry_their_own_variables(self):
        # 2 buckets (a 4-byte cap: one per layer), one stream: each bucket's push and pull
        # reach only the server of its variable: 2 p 4 n_b / B each, one after the other
        sizes = [3_000_000, 1_000_000]
        p, servers = 4, 2
        trace = self.run_servers({"layers": layers(*sizes), "bucket": "4B"}, p, servers, "round-robin",
                                 "star:6:10GBps:0us")
        s = trace["summary"]
        self.assertTrue(s["verified"], s)
        self.assertClose(2 * p * 4 * sum(sizes) / B, s["iteration_time"])
        pushes = {(m["dst"], m["bucket"]) for m in trace["messages"] if m["phase"] == "push"}
        # backward order: bucket 0 holds the last layer (server 1), bucket 1 the first (server 0)
        self.assertEqual(pushes, {(p + 1, 0), (p + 0, 1)})

    def test_the_run_limits_count_only_the_servers_a_bucket_reaches(self):
        # variables of 400, 100, 100, 100 elements on 3 servers, least-loaded in forward order:
        # server 0 gets 400, server 1 100, server 2 100, then server 1 (the first of equals) 100.
        # One bucket per layer: each bucket reaches 1 server, so 2 p x 1 messages each with server
        # processes (2 x 1 x (p - 1) when ranks 0-2 serve); one bucket of all: 3 servers.
        p, servers, sizes = 4, 3, [400, 100, 100, 100]
        for bucket, reached in (("4B", [1, 1, 1, 1]), ("1GiB", [3])):
            for placement in ("dedicated", "workers"):
                with self.subTest(bucket=bucket, placement=placement):
                    trace = self.run_servers({"layers": layers(*sizes), "bucket": bucket}, p, servers, "least-loaded",
                                             "star:7:10GBps:0us", placement=placement)
                    s = trace["summary"]
                    self.assertTrue(s["verified"], s)
                    per_server = 2 * p if placement == "dedicated" else 2 * (p - 1)
                    want = per_server * sum(reached)
                    self.assertEqual(s["message_count"], want)
                    self.assertEqual(trace["plan"]["limits"]["messages"], want)


class BadVariables(TrainingRun):
    def refused(self, deployment, training=None, **top):
        training = training if training is not None else {"layers": layers(1000, 1000)}
        collective = {"algorithm": "parameter-server", "parameter_server": {"placement": "shared", **deployment}}
        run = self.run_training(training, workers=2, collective=collective, expect=2, **top)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        return lines[0]

    def test_bad_values_refused_in_one_line(self):
        self.assertIn("allowed: split, round-robin, least-loaded", self.refused({"variables": "greedy"}))
        self.assertIn("give training.layers", self.refused({"variables": "round-robin"}, training={"rounds": 1}))
        self.assertIn("synchronous servers only",
                      self.refused({"variables": "least-loaded", "mode": "asynchronous"}))


if __name__ == "__main__":
    unittest.main()
