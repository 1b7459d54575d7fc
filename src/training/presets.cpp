#include "training/presets.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace collsim {
namespace {

uint64_t conv(uint64_t kh, uint64_t kw, uint64_t in, uint64_t out) { return kh * kw * in * out; }

// A convolution without bias and its batch norm: three tensors (weight; norm weight and bias).
void conv_bn(std::vector<uint64_t>& tensors, uint64_t weights, uint64_t out) {
  tensors.insert(tensors.end(), {weights, out, out});
}

// ResNet-50, ResNet-101 and ResNet-152 (He et al. 2016; torchvision.models.resnet50, resnet101
// and resnet152, v1.5: stride on the 3x3 conv), 224x224 inputs; `blocks` bottleneck blocks per
// stage ({3, 4, 6, 3}, {3, 4, 23, 3} and {3, 8, 36, 3}). Counted parameters: conv weights (no
// bias), batch-norm weight and bias (running statistics are buffers, not gradients), the fc
// layer's weight and bias: 25,557,032, 44,549,160 and 60,192,808, as torchvision lists. Layers: the stem, each bottleneck block,
// the classifier.
std::vector<PresetLayer> resnet(const std::vector<int>& blocks) {
  std::vector<PresetLayer> layers;
  // stem: 7x7/2 conv to 112x112, batch norm (the max pool halves to 56x56, no parameters)
  std::vector<uint64_t> stem;
  conv_bn(stem, conv(7, 7, 3, 64), 64);
  layers.push_back(layer_of("stem", stem, static_cast<double>(conv(7, 7, 3, 64)) * 112 * 112));
  uint64_t in = 64, size = 56;  // channels and side of the stage's input
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    const uint64_t width = 64u << stage, out = 4 * width;
    for (int b = 0; b < blocks[stage]; ++b) {
      const bool first = b == 0;
      const uint64_t side = first && stage > 0 ? size / 2 : size;  // the 3x3 conv strides in a stage's first block
      std::vector<uint64_t> tensors;
      conv_bn(tensors, conv(1, 1, in, width), width);
      conv_bn(tensors, conv(3, 3, width, width), width);
      conv_bn(tensors, conv(1, 1, width, out), out);
      double macs = static_cast<double>(conv(1, 1, in, width)) * size * size +
                    static_cast<double>(conv(3, 3, width, width) + conv(1, 1, width, out)) * side * side;
      if (first) {  // the shortcut's 1x1 projection (strided like the block) and its batch norm
        conv_bn(tensors, conv(1, 1, in, out), out);
        macs += static_cast<double>(conv(1, 1, in, out)) * side * side;
      }
      layers.push_back(layer_of(fmt::format("layer{}.{}", stage + 1, b), tensors, macs));
      in = out;
      size = side;
    }
  }
  layers.push_back(layer_of("fc", {2048 * 1000, 1000}, 2048.0 * 1000));
  return layers;
}

// VGG-16 (Simonyan & Zisserman 2015, configuration D; torchvision.models.vgg16), 224x224
// inputs: 13 3x3 convolutions with biases in five stages (each ending in a 2x2 max pool),
// then three fully connected layers (25088 -> 4096 -> 4096 -> 1000): 138,357,544
// parameters, as torchvision lists. Layers: each convolution, each fc.
std::vector<PresetLayer> vgg16() {
  const int stages[][2] = {{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}};  // convolutions, channels
  std::vector<PresetLayer> layers;
  uint64_t in = 3, side = 224;
  for (int stage = 0; stage < 5; ++stage) {
    const auto out = static_cast<uint64_t>(stages[stage][1]);
    for (int c = 0; c < stages[stage][0]; ++c) {
      layers.push_back(layer_of(fmt::format("conv{}_{}", stage + 1, c + 1), {conv(3, 3, in, out), out},
                                static_cast<double>(conv(3, 3, in, out)) * static_cast<double>(side * side)));
      in = out;
    }
    side /= 2;
  }
  const uint64_t fc[][2] = {{512 * 7 * 7, 4096}, {4096, 4096}, {4096, 1000}};
  for (int f = 0; f < 3; ++f)
    layers.push_back(layer_of(fmt::format("fc{}", f + 6), {fc[f][0] * fc[f][1], fc[f][1]},
                              static_cast<double>(fc[f][0] * fc[f][1])));
  return layers;
}

// One transformer block's multiply-adds per token: its weight matrices, plus attention's
// scores (QK^T) and weighted sum (AV) over `sequence` positions.
double block_macs_per_token(uint64_t weights, uint64_t hidden, int sequence) {
  return static_cast<double>(weights) + 2.0 * static_cast<double>(sequence) * static_cast<double>(hidden);
}

// BERT-large (Devlin et al. 2019; Hugging Face BertModel, bert-large-uncased): hidden 1024,
// 24 layers, 16 heads, feed-forward 4096, vocabulary 30522, 512 positions, 2 token types.
// 335,141,888 parameters (the pretraining heads are left out). Layers: the embeddings, the
// 24 encoder layers, the pooler (on the first token only).
std::vector<PresetLayer> bert_large(int sequence) {
  const uint64_t h = 1024, ff = 4096, vocab = 30522, positions = 512, types = 2;
  std::vector<PresetLayer> layers;
  // word, position and token-type embeddings, a layer norm's weight and bias
  layers.push_back(layer_of("embeddings", {vocab * h, positions * h, types * h, h, h}, 0));
  // Q, K, V, attention output (each a weight and a bias), a layer norm, the two
  // feed-forward matrices with their biases, a layer norm: Hugging Face's order
  const std::vector<uint64_t> tensors{h * h, h, h * h, h, h * h, h, h * h, h, h, h, h * ff, ff, ff * h, h, h, h};
  const uint64_t weights = 4 * h * h + 2 * h * ff;  // Q, K, V, attention output; the two feed-forward matrices
  for (int l = 0; l < 24; ++l)
    layers.push_back(layer_of(fmt::format("encoder.{}", l), tensors, block_macs_per_token(weights, h, sequence) * sequence));
  layers.push_back(layer_of("pooler", {h * h, h}, static_cast<double>(h * h)));
  return layers;
}

// GPT-2 XL, "1.5B" (Radford et al. 2019; Hugging Face GPT2Model, gpt2-xl): hidden 1600,
// 48 blocks, feed-forward 6400, vocabulary 50257, 1024 positions: 1,557,611,200 parameters.
// The output projection is tied to the token embedding: its parameters are the
// embeddings', its multiply-adds come last, with the final layer norm.
std::vector<PresetLayer> gpt2_xl(int sequence) {
  const uint64_t h = 1600, ff = 6400, vocab = 50257, positions = 1024;
  std::vector<PresetLayer> layers;
  layers.push_back(layer_of("embeddings", {vocab * h, positions * h}, 0));
  // a layer norm, c_attn (Q, K, V) and c_proj, a layer norm, the MLP's c_fc and c_proj:
  // each a weight and a bias, Hugging Face's order
  const std::vector<uint64_t> tensors{h, h, h * 3 * h, 3 * h, h * h, h, h, h, h * ff, ff, ff * h, h};
  const uint64_t weights = 4 * h * h + 2 * h * ff;
  for (int l = 0; l < 48; ++l)
    layers.push_back(layer_of(fmt::format("block.{}", l), tensors, block_macs_per_token(weights, h, sequence) * sequence));
  layers.push_back(layer_of("ln_f+lm_head", {h, h}, static_cast<double>(h * vocab) * sequence));
  return layers;
}

}  // namespace

PresetLayer layer_of(std::string name, std::vector<uint64_t> variables, double forward_macs) {
  uint64_t parameters = 0;
  for (uint64_t count : variables) parameters += count;
  return {std::move(name), parameters, forward_macs, std::move(variables)};
}

const std::vector<std::string>& model_presets() {
  static const std::vector<std::string> names{"resnet-50", "resnet-101", "resnet-152", "vgg-16", "inception-v3", "bert-large", "gpt2-xl"};
  return names;
}

int default_sequence(const std::string& preset) {
  if (preset == "bert-large") return 512;
  if (preset == "gpt2-xl") return 1024;
  return 0;
}

std::vector<PresetLayer> preset_layers(const std::string& preset, int sequence) {
  if (preset == "resnet-50") return resnet({3, 4, 6, 3});
  if (preset == "resnet-101") return resnet({3, 4, 23, 3});
  if (preset == "resnet-152") return resnet({3, 8, 36, 3});
  if (preset == "vgg-16") return vgg16();
  if (preset == "inception-v3") return inception_v3();
  if (preset == "bert-large") return bert_large(sequence);
  if (preset == "gpt2-xl") return gpt2_xl(sequence);
  throw std::logic_error("preset_layers: unknown preset " + preset);
}

}  // namespace collsim
