"""The published scaling tables of docs/training.md#published-scaling-tables-reproduced, in a
reduced version recomputed by hand: Horovod's setup (ResNet-101, batch 64, P100 PCIe at its
datasheet 9.3 TFLOP/s, servers of 4 GPUs on PCIe 3.0 x16 with one 25 Gbit/s NIC) on 2
servers instead of 32 or 128, and Goyal et al.'s (ResNet-50, batch 32, P100 SXM2 at 10.6
TFLOP/s, servers of 8 on NVLink with one 50 Gbit/s NIC, halving-doubling between servers) on
4 servers instead of 32. Without overlap (one bucket) the iteration is one worker's compute
(T1, from the model's multiply-adds) plus one allreduce of the whole gradient, whose time
follows from the slowest hop; scaling_efficiency = T1 / iteration.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_published_scaling
"""
import math
import unittest

from test_presets import resnet_count
from test_training import TrainingRun

NIC_LAT, INTRA_LAT = 2e-6, 0.5e-6  # the nodes: generator's defaults


def resnet_macs(blocks):
    """Forward multiply-adds of one 224x224 image through a torchvision bottleneck ResNet."""
    macs, inputs, side = 7 * 7 * 3 * 64 * 112 * 112, 64, 56
    for stage, n in enumerate(blocks):
        width = 64 << stage
        for b in range(n):
            out_side = side // 2 if b == 0 and stage > 0 else side
            macs += inputs * width * side * side + (9 * width * width + width * 4 * width) * out_side * out_side
            if b == 0:
                macs += inputs * 4 * width * out_side * out_side
            inputs, side = 4 * width, out_side
    return macs + 2048 * 1000


def compute_seconds(macs, batch, flops):
    """Forward 2 flops per multiply-add of each sample, backward twice that."""
    return 3 * 2 * macs * batch / flops


class PublishedReduced(TrainingRun):
    def test_horovod_resnet101_on_two_servers_without_overlap(self):
        p, nic = 8, 3.125e9
        trace = self.run_training({"batch": 64, "layers": {"preset": "resnet-101", "device_flops": "9.3Tf"}},
                                  workers=p, topology="nodes:2:4:15.75GBps:3.125GBps")
        s = trace["summary"]
        n = 4 * resnet_count([3, 4, 23, 3])
        t1 = compute_seconds(resnet_macs([3, 4, 23, 3]), 64, 9.3e12)
        # the ring crosses a NIC each way at every step: 2(p-1) steps paced by that hop
        ring = 2 * (p - 1) * (2 * INTRA_LAT + 2 * NIC_LAT + n / p / nic)
        self.assertAlmostEqual(s["compute_time"], t1, delta=t1 * 1e-9)
        self.assertAlmostEqual(s["iteration_time"], t1 + ring, delta=(t1 + ring) * 1e-6)
        self.assertAlmostEqual(s["scaling_efficiency"], t1 / (t1 + ring), delta=1e-6)

    def test_goyal_resnet50_on_four_servers_without_overlap(self):
        servers, g, nic = 4, 8, 6.25e9
        p = servers * g
        trace = self.run_training({"batch": 32, "layers": {"preset": "resnet-50", "device_flops": "10.6Tf"}},
                                  workers=p, topology=f"nodes:{servers}:{g}:20GBps:6.25GBps",
                                  collective={"algorithm": "hierarchical", "inter": "halving-doubling"})
        s = trace["summary"]
        n = 4 * resnet_count([3, 4, 6, 3])
        t1 = compute_seconds(resnet_macs([3, 4, 6, 3]), 32, 10.6e12)
        inside = 2 * (g - 1) * (2 * INTRA_LAT + n / g / 20e9)
        # the g pieces' halving and doubling share each server's NIC: g flows of
        # (G-1)/G n/g bytes each way, 2 log2(G) latencies
        across = 2 * (math.log2(servers) * (2 * INTRA_LAT + 2 * NIC_LAT) + (servers - 1) / servers * n / nic)
        self.assertAlmostEqual(s["compute_time"], t1, delta=t1 * 1e-9)
        self.assertAlmostEqual(s["iteration_time"], t1 + inside + across, delta=(t1 + inside + across) * 1e-6)
        self.assertTrue(s["verified"])


class PublishedParameterServersReduced(TrainingRun):
    """The two parameter-server tables, reduced: without overlap (one bucket) an iteration is T1
    plus one push and one pull through the busiest link, priced by hand."""
    LOOPBACK = 10e9  # SimGrid's network/loopback-bw: a worker's push to the server beside it

    def test_piz_daint_four_nodes_three_shared_servers(self):
        # 4 one-GPU nodes, servers beside ranks 0-2: each server's links carry the 3 other
        # workers' shards of n/3 each way (PCIe 3.0 x16 both hops: 15.75 GB/s), so every
        # remote flow gets B/3 and the push ends at 5 us + n/B; the local push (n/3 on the
        # loopback) is shorter
        p, servers, B = 4, 3, 15.75e9
        trace = self.run_training({"batch": 64, "layers": {"preset": "resnet-50", "device_flops": "9.3Tf"}},
                                  workers=p, topology=f"nodes:{p}:1:15.75GBps:15.75GBps",
                                  collective={"algorithm": "parameter-server", "servers": servers,
                                              "parameter_server": {"placement": "shared"}})
        s = trace["summary"]
        n = 4 * resnet_count([3, 4, 6, 3])
        self.assertLess(n / servers / self.LOOPBACK, 2 * INTRA_LAT + 2 * NIC_LAT + n / B)
        t1 = compute_seconds(resnet_macs([3, 4, 6, 3]), 64, 9.3e12)
        comm = 2 * (2 * INTRA_LAT + 2 * NIC_LAT + (p - 1) * (n / servers) / B)
        self.assertAlmostEqual(s["iteration_time"], t1 + comm, delta=(t1 + comm) * 1e-6)
        self.assertAlmostEqual(s["scaling_efficiency"], t1 / (t1 + comm), delta=1e-6)
        self.assertTrue(s["verified"])

    def test_piz_daint_with_the_datasheet_servers_cpu(self):
        # The same, with the server's summation priced from its CPU's datasheet (docs/training.md,
        # "Where the figures stop"): a Xeon E5-2690 v3 has 4 channels of DDR4-2133, 4 x 2133e6
        # x 8 B = 68.256 GB/s, and adding a pushed byte into the shard touches 3 bytes (read the
        # push, read the sum, write the sum): 22.752 GB/s. Each server handles its p pushes of n/S
        # once they have arrived: p n / (S c) more per iteration.
        p, servers, B = 4, 3, 15.75e9
        cpu = 4 * 2133e6 * 8 / 3
        trace = self.run_training({"batch": 64, "layers": {"preset": "resnet-50", "device_flops": "9.3Tf"}},
                                  workers=p, topology=f"nodes:{p}:1:15.75GBps:15.75GBps",
                                  collective={"algorithm": "parameter-server", "servers": servers,
                                              "parameter_server": {"placement": "shared",
                                                                   "cpu_bandwidth": "22.752GBps"}})
        s = trace["summary"]
        n = 4 * resnet_count([3, 4, 6, 3])
        t1 = compute_seconds(resnet_macs([3, 4, 6, 3]), 64, 9.3e12)
        comm = 2 * (2 * INTRA_LAT + 2 * NIC_LAT + (p - 1) * (n / servers) / B) + p * (n / servers) / cpu
        self.assertAlmostEqual(s["iteration_time"], t1 + comm, delta=(t1 + comm) * 1e-6)
        self.assertTrue(s["verified"])

    def test_tf_ec2_two_instances_local_aggregation(self):
        # 2 instances of 2 K80 GPUs (PCIe 15.75 GB/s, one 10 Gbit/s NIC), a server beside each
        # instance's first GPU: the second GPU's vector into the first (node-reduce), one push
        # of n/2 across the NICs each way (the other shard on the loopback), the same back
        nodes, g, pcie, nic = 2, 2, 15.75e9, 1.25e9
        trace = self.run_training({"batch": 64, "layers": {"preset": "resnet-50", "device_flops": "4.365Tf"}},
                                  workers=nodes * g, topology=f"nodes:{nodes}:{g}:15.75GBps:1.25GBps",
                                  collective={"algorithm": "parameter-server",
                                              "parameter_server": {"placement": "shared", "per_node": 1,
                                                                   "local_aggregation": True}})
        s = trace["summary"]
        n = 4 * resnet_count([3, 4, 6, 3])
        t1 = compute_seconds(resnet_macs([3, 4, 6, 3]), 64, 4.365e12)
        inside = 2 * (2 * INTRA_LAT + (g - 1) * n / pcie)
        across = 2 * (2 * INTRA_LAT + 2 * NIC_LAT + (n / nodes) / nic)
        self.assertAlmostEqual(s["iteration_time"], t1 + inside + across, delta=(t1 + inside + across) * 1e-6)
        self.assertTrue(s["verified"])


if __name__ == "__main__":
    unittest.main()
