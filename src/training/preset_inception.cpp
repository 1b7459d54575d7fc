// Inception V3 (Szegedy et al. 2016, "Rethinking the Inception Architecture"; the layer
// table of torchvision.models.inception_v3, 299x299 inputs, with its auxiliary classifier
// as trained): 27,161,264 parameters, as torchvision lists (23,834,568 without the
// auxiliary classifier). Every convolution is torchvision's BasicConv2d: no bias, a batch
// norm (weight and bias counted; running statistics are buffers). Layers: the five stem
// convolutions, each Mixed block, the auxiliary classifier after Mixed_6e, the fc.
#include <fmt/format.h>

#include "training/presets.hpp"

namespace collsim {
namespace {

// A layer built convolution by convolution: each adds its weights and batch norm (three
// tensors: the weight, the norm's weight and bias), and its multiply-adds at its output's side.
struct Block {
  PresetLayer layer;
  Block& conv(uint64_t kh, uint64_t kw, uint64_t in, uint64_t out, uint64_t side) {
    layer.parameters += kh * kw * in * out + 2 * out;
    layer.variables.insert(layer.variables.end(), {kh * kw * in * out, out, out});
    layer.forward_macs += static_cast<double>(kh * kw * in * out) * static_cast<double>(side * side);
    return *this;
  }
};

Block named(const std::string& name) { return Block{PresetLayer{name, 0, 0, {}}}; }

// 35x35: 1x1; 1x1 then 5x5; 1x1 then two 3x3; pool then 1x1 (pool_features)
PresetLayer inception_a(const std::string& name, uint64_t in, uint64_t pool_features) {
  return named(name).conv(1, 1, in, 64, 35).conv(1, 1, in, 48, 35).conv(5, 5, 48, 64, 35)
      .conv(1, 1, in, 64, 35).conv(3, 3, 64, 96, 35).conv(3, 3, 96, 96, 35).conv(1, 1, in, pool_features, 35).layer;
}

// 35x35 to 17x17: a strided 3x3; 1x1, 3x3, strided 3x3; a max pool
PresetLayer inception_b(const std::string& name, uint64_t in) {
  return named(name).conv(3, 3, in, 384, 17).conv(1, 1, in, 64, 35).conv(3, 3, 64, 96, 35).conv(3, 3, 96, 96, 17).layer;
}

// 17x17, factorized 7x7 convolutions of `c7` channels
PresetLayer inception_c(const std::string& name, uint64_t in, uint64_t c7) {
  return named(name).conv(1, 1, in, 192, 17)
      .conv(1, 1, in, c7, 17).conv(1, 7, c7, c7, 17).conv(7, 1, c7, 192, 17)
      .conv(1, 1, in, c7, 17).conv(7, 1, c7, c7, 17).conv(1, 7, c7, c7, 17).conv(7, 1, c7, c7, 17).conv(1, 7, c7, 192, 17)
      .conv(1, 1, in, 192, 17).layer;
}

// 17x17 to 8x8: 1x1 then a strided 3x3; 1x1, 1x7, 7x1, strided 3x3; a max pool
PresetLayer inception_d(const std::string& name, uint64_t in) {
  return named(name).conv(1, 1, in, 192, 17).conv(3, 3, 192, 320, 8)
      .conv(1, 1, in, 192, 17).conv(1, 7, 192, 192, 17).conv(7, 1, 192, 192, 17).conv(3, 3, 192, 192, 8).layer;
}

// 8x8, expanded filter banks (1x3 and 3x1 side by side)
PresetLayer inception_e(const std::string& name, uint64_t in) {
  return named(name).conv(1, 1, in, 320, 8)
      .conv(1, 1, in, 384, 8).conv(1, 3, 384, 384, 8).conv(3, 1, 384, 384, 8)
      .conv(1, 1, in, 448, 8).conv(3, 3, 448, 384, 8).conv(1, 3, 384, 384, 8).conv(3, 1, 384, 384, 8)
      .conv(1, 1, in, 192, 8).layer;
}

}  // namespace

std::vector<PresetLayer> inception_v3() {
  std::vector<PresetLayer> layers;
  const uint64_t stem[][4] = {{3, 3, 32, 149}, {32, 3, 32, 147}, {32, 3, 64, 147}, {64, 1, 80, 73}, {80, 3, 192, 71}};
  const char* stem_names[] = {"Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "Conv2d_3b_1x1", "Conv2d_4a_3x3"};
  for (int c = 0; c < 5; ++c)
    layers.push_back(named(stem_names[c]).conv(stem[c][1], stem[c][1], stem[c][0], stem[c][2], stem[c][3]).layer);
  layers.push_back(inception_a("Mixed_5b", 192, 32));
  layers.push_back(inception_a("Mixed_5c", 256, 64));
  layers.push_back(inception_a("Mixed_5d", 288, 64));
  layers.push_back(inception_b("Mixed_6a", 288));
  layers.push_back(inception_c("Mixed_6b", 768, 128));
  layers.push_back(inception_c("Mixed_6c", 768, 160));
  layers.push_back(inception_c("Mixed_6d", 768, 160));
  layers.push_back(inception_c("Mixed_6e", 768, 192));
  // 17x17 average-pooled (5x5, stride 3) to 5x5, a 1x1 and a 5x5 convolution, an fc
  PresetLayer aux = named("AuxLogits").conv(1, 1, 768, 128, 5).conv(5, 5, 128, 768, 1).layer;
  aux.parameters += 768 * 1000 + 1000;
  aux.variables.insert(aux.variables.end(), {768 * 1000, 1000});
  aux.forward_macs += 768.0 * 1000;
  layers.push_back(aux);
  layers.push_back(inception_d("Mixed_7a", 768));
  layers.push_back(inception_e("Mixed_7b", 1280));
  layers.push_back(inception_e("Mixed_7c", 2048));
  layers.push_back(layer_of("fc", {2048 * 1000, 1000}, 2048.0 * 1000));
  return layers;
}

}  // namespace collsim
