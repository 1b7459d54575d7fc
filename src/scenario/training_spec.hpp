#pragma once
// The scenario's "training" section (docs/scenario-format.md, docs/training.md): rounds,
// computation, a model, layers (given, uniform, or a preset's), buckets, sharding.
#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"

namespace collsim {

TrainingSpec parse_training(const nlohmann::json& object);

}  // namespace collsim
