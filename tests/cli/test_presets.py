"""Model presets (training.layers {"preset": ...}): parameter counts against the published
totals, each layer's multiply-adds against a reference written here from the papers'
architecture tables, and the compute times that follow from a device throughput or from
totals; bad presets refused in one line.

    cd tests/cli && COLLSIM=../../build/collsim /usr/bin/python3 -m unittest -v test_presets
"""
import unittest

from test_training import TrainingRun

# torchvision.models.resnet50 (25,557,032), resnet101 (44,549,160), resnet152 (60,192,808),
# vgg16 (138,357,544),
# inception_v3 (27,161,264, its auxiliary classifier included), Hugging Face
# bert-large-uncased BertModel (335,141,888), gpt2-xl GPT2Model (1,557,611,200).
PUBLISHED = {"resnet-50": 25557032, "resnet-101": 44549160, "resnet-152": 60192808, "vgg-16": 138357544, "inception-v3": 27161264,
             "bert-large": 335141888, "gpt2-xl": 1557611200}
# torchvision's GFLOPS (multiply-adds of one image, inference: Inception V3 without its
# auxiliary classifier).
PUBLISHED_GMACS = {"resnet-50": 4.09, "resnet-101": 7.80, "resnet-152": 11.51, "vgg-16": 15.47, "inception-v3": 5.71}


def resnet_count(blocks):
    """Parameters of a torchvision bottleneck ResNet, from its stages."""
    count, inputs = 7 * 7 * 3 * 64 + 2 * 64, 64
    for stage, n in enumerate(blocks):
        width = 64 << stage
        for b in range(n):
            count += inputs * width + 9 * width * width + width * 4 * width + 2 * (6 * width)
            if b == 0:
                count += inputs * 4 * width + 2 * 4 * width
            inputs = 4 * width
    return count + 2048 * 1000 + 1000


def vgg16_count_and_macs():
    """Configuration D: (convolutions, channels) per stage at 224, 112, 56, 28, 14; then the fcs."""
    count, macs, inputs, side = 0, 0, 3, 224
    for convs, channels in [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)]:
        for _ in range(convs):
            count += 9 * inputs * channels + channels
            macs += 9 * inputs * channels * side * side
            inputs = channels
        side //= 2
    for fan_in, fan_out in [(25088, 4096), (4096, 4096), (4096, 1000)]:
        count += fan_in * fan_out + fan_out
        macs += fan_in * fan_out
    return count, macs


def inception_v3_convs():
    """(module, kh, kw, in, out, output side) of every BasicConv2d of torchvision's Inception V3."""
    convs = [("stem", 3, 3, 3, 32, 149), ("stem", 3, 3, 32, 32, 147), ("stem", 3, 3, 32, 64, 147),
             ("stem", 1, 1, 64, 80, 73), ("stem", 3, 3, 80, 192, 71)]
    for cin, pool in [(192, 32), (256, 64), (288, 64)]:  # InceptionA at 35
        convs += [("A", 1, 1, cin, 64, 35), ("A", 1, 1, cin, 48, 35), ("A", 5, 5, 48, 64, 35),
                  ("A", 1, 1, cin, 64, 35), ("A", 3, 3, 64, 96, 35), ("A", 3, 3, 96, 96, 35),
                  ("A", 1, 1, cin, pool, 35)]
    convs += [("B", 3, 3, 288, 384, 17), ("B", 1, 1, 288, 64, 35), ("B", 3, 3, 64, 96, 35), ("B", 3, 3, 96, 96, 17)]
    for c7 in (128, 160, 160, 192):  # InceptionC at 17
        convs += [("C", 1, 1, 768, 192, 17), ("C", 1, 1, 768, c7, 17), ("C", 1, 7, c7, c7, 17),
                  ("C", 7, 1, c7, 192, 17), ("C", 1, 1, 768, c7, 17), ("C", 7, 1, c7, c7, 17),
                  ("C", 1, 7, c7, c7, 17), ("C", 7, 1, c7, c7, 17), ("C", 1, 7, c7, 192, 17),
                  ("C", 1, 1, 768, 192, 17)]
    convs += [("aux", 1, 1, 768, 128, 5), ("aux", 5, 5, 128, 768, 1)]
    convs += [("D", 1, 1, 768, 192, 17), ("D", 3, 3, 192, 320, 8), ("D", 1, 1, 768, 192, 17),
              ("D", 1, 7, 192, 192, 17), ("D", 7, 1, 192, 192, 17), ("D", 3, 3, 192, 192, 8)]
    for cin in (1280, 2048):  # InceptionE at 8
        convs += [("E", 1, 1, cin, 320, 8), ("E", 1, 1, cin, 384, 8), ("E", 1, 3, 384, 384, 8),
                  ("E", 3, 1, 384, 384, 8), ("E", 1, 1, cin, 448, 8), ("E", 3, 3, 448, 384, 8),
                  ("E", 1, 3, 384, 384, 8), ("E", 3, 1, 384, 384, 8), ("E", 1, 1, cin, 192, 8)]
    return convs


def inception_v3_count_and_macs():
    """Parameters (auxiliary classifier included) and inference multiply-adds (without it)."""
    convs = inception_v3_convs()
    count = sum(kh * kw * cin * cout + 2 * cout for _, kh, kw, cin, cout, _ in convs)
    count += 768 * 1000 + 1000 + 2048 * 1000 + 1000  # the two fc layers
    macs = sum(kh * kw * cin * cout * side * side for module, kh, kw, cin, cout, side in convs if module != "aux")
    return count, macs + 2048 * 1000


def resnet50_convs():
    """(layer, kernel, in, out, output side) of every conv and fc of ResNet-50 v1.5 at 224x224."""
    convs = [("stem", 7, 3, 64, 112)]
    inputs, side = 64, 56
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        for b in range(blocks):
            name = f"layer{stage + 1}.{b}"
            out_side = side // 2 if b == 0 and stage > 0 else side
            convs.append((name, 1, inputs, width, side))
            convs.append((name, 3, width, width, out_side))
            convs.append((name, 1, width, 4 * width, out_side))
            if b == 0:
                convs.append((name, 1, inputs, 4 * width, out_side))  # projection shortcut
            inputs, side = 4 * width, out_side
    convs.append(("fc", 1, 2048, 1000, 1))
    return convs


def resnet50_macs():
    macs = {}
    for name, k, cin, cout, side in resnet50_convs():
        macs[name] = macs.get(name, 0) + k * k * cin * cout * side * side
    return macs


def transformer_block_macs(hidden, feed_forward, sequence):
    """Per sample: Q, K, V and output projections, the two feed-forward matrices, and
    attention's QK^T and AV, for each of `sequence` tokens."""
    per_token = 4 * hidden * hidden + 2 * hidden * feed_forward + 2 * sequence * hidden
    return per_token * sequence


class Presets(TrainingRun):
    def run_preset(self, layers, batch=8, expect=0):
        training = {"layers": layers}
        if batch:
            training["batch"] = batch
        run = self.run_training(training, workers=2, expect=expect)
        return run.stderr if expect else run

    def test_parameters_add_up_to_the_published_totals(self):
        for preset, total in PUBLISHED.items():
            with self.subTest(preset=preset):
                trace = self.run_preset({"preset": preset, "forward": "10ms", "backward": "20ms"})
                layers = trace["scenario"]["training"]["layers"]
                self.assertEqual(sum(layer["parameters"] for layer in layers), total)
                self.assertEqual(trace["payload"]["logical_bytes"], 4 * total)  # float32 gradients

    def test_cnn_counts_recomputed_from_their_architectures(self):
        self.assertEqual(resnet_count([3, 4, 6, 3]), PUBLISHED["resnet-50"])
        self.assertEqual(resnet_count([3, 4, 23, 3]), PUBLISHED["resnet-101"])
        self.assertEqual(resnet_count([3, 8, 36, 3]), PUBLISHED["resnet-152"])
        vgg, vgg_macs = vgg16_count_and_macs()
        self.assertEqual(vgg, PUBLISHED["vgg-16"])
        inception, inception_macs = inception_v3_count_and_macs()
        self.assertEqual(inception, PUBLISHED["inception-v3"])
        self.assertAlmostEqual(vgg_macs / 1e9, PUBLISHED_GMACS["vgg-16"], delta=0.01)
        self.assertAlmostEqual(inception_macs / 1e9, PUBLISHED_GMACS["inception-v3"], delta=0.01)

    def test_cnn_presets_carry_their_multiply_adds(self):
        # device_flops 1 Tf, batch 1: each layer's forward is 2 x its multiply-adds / 1e12
        expected = {"vgg-16": vgg16_count_and_macs()[1], "resnet-101": None,
                    "resnet-152": None, "inception-v3": inception_v3_count_and_macs()[1]}
        for preset, macs in expected.items():
            with self.subTest(preset=preset):
                layers = self.run_preset({"preset": preset, "device_flops": "1Tf"}, batch=1)["scenario"]["training"]["layers"]
                total = sum(layer["forward"] for layer in layers) / 2 * 1e12
                if preset == "inception-v3":  # the auxiliary classifier runs in training
                    aux = next(layer for layer in layers if layer["name"] == "AuxLogits")
                    total -= aux["forward"] / 2 * 1e12
                if macs is None:
                    self.assertAlmostEqual(total / 1e9, PUBLISHED_GMACS[preset], delta=0.01)
                else:
                    self.assertAlmostEqual(total, macs, delta=macs * 1e-12)

    def test_resnet_compute_follows_each_layers_multiply_adds_at_the_device_speed(self):
        trace = self.run_preset({"preset": "resnet-50", "device_flops": "100Tf"}, batch=32)
        layers = trace["scenario"]["training"]["layers"]
        macs = resnet50_macs()
        self.assertEqual([layer["name"] for layer in layers], list(macs))
        for layer in layers:
            forward = 32 * 2 * macs[layer["name"]] / 100e12
            self.assertAlmostEqual(layer["forward"], forward, delta=forward * 1e-12)
            self.assertAlmostEqual(layer["backward"], 2 * forward, delta=forward * 1e-12)
        # torchvision lists 4.09 GFLOPS (multiply-adds) for one 224x224 image
        self.assertAlmostEqual(sum(macs.values()) / 1e9, 4.09, delta=0.01)

    def test_bert_totals_split_in_proportion_to_the_multiply_adds(self):
        trace = self.run_preset({"preset": "bert-large", "sequence": 128, "forward": "30ms", "backward": "60ms"})
        layers = trace["scenario"]["training"]["layers"]
        block, pooler = transformer_block_macs(1024, 4096, 128), 1024 * 1024
        total = 24 * block + pooler
        self.assertEqual(len(layers), 26)
        self.assertEqual(layers[0]["forward"], 0)  # embeddings: lookups
        for layer in layers[1:25]:
            self.assertAlmostEqual(layer["forward"], 30e-3 * block / total, delta=1e-15)
            self.assertAlmostEqual(layer["backward"], 60e-3 * block / total, delta=1e-15)
        self.assertAlmostEqual(layers[25]["forward"], 30e-3 * pooler / total, delta=1e-15)
        self.assertAlmostEqual(sum(layer["forward"] for layer in layers), 30e-3, delta=1e-12)

    def test_gpt2_output_projection_is_timed_last_and_counted_in_the_embeddings(self):
        trace = self.run_preset({"preset": "gpt2-xl", "device_flops": "1Tf"}, batch=1)
        layers = trace["scenario"]["training"]["layers"]
        self.assertEqual(len(layers), 50)
        self.assertEqual(layers[0]["parameters"], (50257 + 1024) * 1600)
        self.assertEqual(layers[-1]["parameters"], 2 * 1600)
        self.assertAlmostEqual(layers[-1]["forward"], 2 * 1600 * 50257 * 1024 / 1e12, delta=1e-12)
        self.assertAlmostEqual(layers[1]["forward"], 2 * transformer_block_macs(1600, 6400, 1024) / 1e12, delta=1e-12)

    def assert_refused(self, layers, fragment, batch=8):
        stderr = self.run_preset(layers, batch=batch, expect=2)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("collsim: error: "), stderr)
        self.assertIn(fragment, lines[0])

    def test_bad_presets_are_refused_in_one_line(self):
        self.assert_refused({"preset": "bert-larg", "device_flops": "1Tf"},
                            "training.layers.preset: unknown model 'bert-larg' (did you mean 'bert-large'?); "
                            "allowed: resnet-50, resnet-101, resnet-152, vgg-16, inception-v3, bert-large, gpt2-xl")
        self.assert_refused({"preset": "resnet-50", "sequence": 128, "device_flops": "1Tf"},
                            "training.layers.sequence: resnet-50 has no sequence")
        self.assert_refused({"preset": "resnet-50", "forward": "1ms"}, "training.layers: give the compute times")
        self.assert_refused({"preset": "resnet-50", "forward": "1ms", "backward": "1ms", "device_flops": "1Tf"},
                            "training.layers: give the compute times")
        self.assert_refused({"preset": "gpt2-xl", "device_flops": "1Tf"}, "training.layers.device_flops:", batch=None)
        self.assert_refused({"preset": "gpt2-xl", "device_flops": "1Tf", "layers": 3},
                            "training.layers.layers: unknown key")


if __name__ == "__main__":
    unittest.main()
