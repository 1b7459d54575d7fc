// Whole variables on parameter servers (src/training/variable_placement.hpp): the presets'
// tensor tables against the frameworks' parameter lists, and placements worked by hand.
#include <doctest/doctest.h>

#include <numeric>

#include "training/presets.hpp"
#include "training/variable_placement.hpp"

using namespace collsim;

TEST_CASE("presets list their tensors as the frameworks do, adding up to each layer's parameters") {
  // len(list(model.parameters())): torchvision resnet50/101/152 (3 per conv + batch norm, 2
  // for the fc), vgg16 (a weight and a bias per layer), inception_v3 with its auxiliary
  // classifier (96 BasicConv2d, 2 fc); Hugging Face BertModel (5 + 24 x 16 + 2), GPT2Model
  // (2 + 48 x 12 + 2)
  const std::pair<const char*, size_t> counts[] = {{"resnet-50", 161},   {"resnet-101", 314}, {"resnet-152", 467},
                                                   {"vgg-16", 32},       {"inception-v3", 292}, {"bert-large", 391},
                                                   {"gpt2-xl", 580}};
  for (const auto& [preset, count] : counts) {
    CAPTURE(preset);
    size_t tensors = 0;
    for (const PresetLayer& layer : preset_layers(preset, default_sequence(preset))) {
      CAPTURE(layer.name);
      CHECK(std::accumulate(layer.variables.begin(), layer.variables.end(), uint64_t{0}) == layer.parameters);
      tensors += layer.variables.size();
    }
    CHECK(tensors == count);
  }
}

TEST_CASE("round-robin and least-loaded placements of variables, and a bucket's pieces, by hand") {
  // layer 0: tensors 5 and 1; layer 1: one tensor of 3 (no table); layer 2: tensors 2 and 2
  std::vector<Layer> layers{{"a", 6, 0, 0, {5, 1}}, {"b", 3, 0, 0, {}}, {"c", 4, 0, 0, {2, 2}}};
  CHECK(model_variables(layers) == std::vector<uint64_t>{5, 1, 3, 2, 2});
  // round-robin over 2: 0 1 0 1 0; least-loaded: 5 -> s0, 1 -> s1, 3 -> s1 (1 < 5), 2 -> s1 (4 < 5), 2 -> s0 (5 < 6)
  CHECK(place_variables(layers, VariablePlacement::round_robin, 2) == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(place_variables(layers, VariablePlacement::least_loaded, 2) == std::vector<int>{0, 1, 1, 1, 0});
  // least-loaded over 3, ties to the first: 5 -> s0, 1 -> s1, 3 -> s2, 2 -> s1 (loads 5 1 3), 2 -> s1 (5 3 3)
  CHECK(place_variables(layers, VariablePlacement::least_loaded, 3) == std::vector<int>{0, 1, 2, 1, 1});
  // the bucket of layers 1 and 2 (offsets relative to the bucket): 3 at 0, 2 at 3, 2 at 5
  const std::vector<int> server_of{0, 1, 1, 1, 0};
  Bucket bucket;
  bucket.first = 1;
  bucket.last = 2;
  const ServerPieces pieces = bucket_pieces(layers, bucket, server_of);
  REQUIRE(pieces.size() == 3);
  CHECK((pieces[0].offset == 0 && pieces[0].count == 3 && pieces[0].server == 1));
  CHECK((pieces[1].offset == 3 && pieces[1].count == 2 && pieces[1].server == 1));
  CHECK((pieces[2].offset == 5 && pieces[2].count == 2 && pieces[2].server == 0));
  // what each server holds of the bucket (algorithms/server_deployment.hpp)
  ServerDeployment deployment;
  deployment.pieces = std::make_shared<const ServerPieces>(pieces);
  const auto spans = server_spans(deployment, 7, 2);
  CHECK(spans[0].size() == 1);
  CHECK(spans[1].size() == 2);
  CHECK((spans[0][0].offset == 5 && spans[0][0].count == 2));
}
