#pragma once
// Well-known models as layer tables (docs/training.md#model-presets): each layer's
// parameters, counted from the model's definition, and its forward multiply-adds per
// sample, from which the layers' compute times follow (a stated device throughput, or
// totals the user gives, split in proportion).
#include <cstdint>
#include <string>
#include <vector>

namespace collsim {

struct PresetLayer {
  std::string name;
  uint64_t parameters = 0;
  double forward_macs = 0;  // multiply-adds of one sample's forward pass
  // The layer's trainable tensors (the framework's variables: a convolution's weight, a
  // batch norm's weight and bias, ...), each its parameters, in the model's parameter
  // order; they add up to `parameters`. Parameter servers may place each whole on one
  // server (collective.parameter_server.variables).
  std::vector<uint64_t> variables;
};

// A layer made of the tensors `variables` (its parameters, their sum).
PresetLayer layer_of(std::string name, std::vector<uint64_t> variables, double forward_macs);

// The names of the presets: "resnet-50", "resnet-101", "resnet-152", "vgg-16",
// "inception-v3", "bert-large", "gpt2-xl".
const std::vector<std::string>& model_presets();

// The sequence length a transformer preset uses when none is given (0 for a CNN).
int default_sequence(const std::string& preset);

// The layers of `preset` in forward order; `sequence` is the tokens per sample of a
// transformer (ignored by a CNN). The name must be one of model_presets().
std::vector<PresetLayer> preset_layers(const std::string& preset, int sequence);

// Inception V3's layer table (training/preset_inception.cpp).
std::vector<PresetLayer> inception_v3();

}  // namespace collsim
