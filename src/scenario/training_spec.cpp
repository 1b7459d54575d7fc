#include "scenario/training_spec.hpp"

#include <cmath>
#include <fmt/format.h>

#include "scenario/json_fields.hpp"
#include "training/presets.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

// {"preset": NAME, "sequence", and "forward" + "backward" totals or "device_flops"}: the
// preset's layers (training/presets.hpp), with compute times in proportion to each layer's
// multiply-adds: the totals split, or 2 flops per multiply-add of `batch` samples at the
// device's speed forward and twice that backward.
std::vector<Layer> parse_preset(const json& value, std::optional<int> batch) {
  const std::string where = "training.layers";
  check_keys(value, where, {"preset", "sequence", "forward", "backward", "device_flops"});
  const std::string name = get_string(value["preset"], where + ".preset");
  const auto& names = model_presets();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError(fmt::format("{}.preset: unknown model '{}'{}; allowed: {}", where, name, did_you_mean(name, names),
                                 join(names)));
  int sequence = default_sequence(name);
  if (value.contains("sequence")) {
    if (sequence == 0) throw InputError(fmt::format("{}.sequence: {} has no sequence (its samples are images)", where, name));
    sequence = static_cast<int>(get_integer(value["sequence"], where + ".sequence", 1, 1 << 20));
  }
  const bool totals = value.contains("forward") || value.contains("backward");
  if (totals == value.contains("device_flops") || (totals && !(value.contains("forward") && value.contains("backward"))))
    throw InputError(fmt::format("{}: give the compute times of {}: \"forward\" and \"backward\" (per iteration on one "
                                 "worker), or \"device_flops\" (the device's flop/s, e.g. \"100Tf\") with training.batch",
                                 where, name));
  const auto table = preset_layers(name, sequence);
  double macs = 0;
  for (const PresetLayer& layer : table) macs += layer.forward_macs;
  double forward = 0, backward = 0;  // per multiply-add
  if (totals) {
    forward = get_quantity(value["forward"], where + ".forward", parse_time) / macs;
    backward = get_quantity(value["backward"], where + ".backward", parse_time) / macs;
  } else {
    if (!batch) throw InputError(fmt::format("{}.device_flops: the compute time follows from training.batch: give it", where));
    const double speed = get_quantity(value["device_flops"], where + ".device_flops", parse_flops);
    if (!(speed > 0)) throw InputError(fmt::format("{}.device_flops: must be > 0, e.g. \"100Tf\"", where));
    forward = 2.0 * *batch / speed;
    backward = 2 * forward;
  }
  std::vector<Layer> layers;
  for (const PresetLayer& layer : table)
    layers.push_back({layer.name, layer.parameters, layer.forward_macs * forward, layer.forward_macs * backward,
                      layer.variables});
  return layers;
}

// A list of {"name", "parameters", "forward", "backward"} in forward order,
// {"uniform": {"count", "parameters", "forward", "backward"}} (totals split evenly), or a
// preset model ({"preset": ...}).
std::vector<Layer> parse_layers(const json& value, std::optional<int> batch) {
  std::vector<Layer> layers;
  if (value.is_object() && value.contains("preset")) {
    layers = parse_preset(value, batch);
  } else if (value.is_object()) {
    check_keys(value, "training.layers", {"uniform", "preset"});
    if (!value.contains("uniform"))
      throw InputError("training.layers: give a list of layers, {\"uniform\": {...}} or {\"preset\": ...}");
    const json& uniform = value["uniform"];
    check_keys(uniform, "training.layers.uniform", {"count", "parameters", "forward", "backward"});
    for (const char* key : {"count", "parameters"})
      if (!uniform.contains(key)) throw InputError(fmt::format("training.layers.uniform.{}: missing", key));
    const auto count = get_integer(uniform["count"], "training.layers.uniform.count", 1, 100'000);
    const auto total = get_integer(uniform["parameters"], "training.layers.uniform.parameters", count, int64_t{1} << 50);
    const double forward = uniform.contains("forward")
                               ? get_quantity(uniform["forward"], "training.layers.uniform.forward", parse_time) : 0;
    const double backward = uniform.contains("backward")
                                ? get_quantity(uniform["backward"], "training.layers.uniform.backward", parse_time) : 0;
    for (long long l = 0; l < count; ++l) {
      Layer layer;
      layer.name = fmt::format("layer-{}", l);
      layer.parameters = static_cast<uint64_t>(total / count + (l < total % count ? 1 : 0));
      layer.forward = forward / static_cast<double>(count);
      layer.backward = backward / static_cast<double>(count);
      layers.push_back(std::move(layer));
    }
  } else if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const std::string where = fmt::format("training.layers.{}", i);
      check_keys(value[i], where, {"name", "parameters", "forward", "backward"});
      if (!value[i].contains("parameters")) throw InputError(where + ".parameters: missing");
      Layer layer;
      layer.name = value[i].contains("name") ? get_string(value[i]["name"], where + ".name") : fmt::format("layer-{}", i);
      check_label(layer.name, where + ".name");
      layer.parameters = static_cast<uint64_t>(get_integer(value[i]["parameters"], where + ".parameters", 1, int64_t{1} << 50));
      if (value[i].contains("forward")) layer.forward = get_quantity(value[i]["forward"], where + ".forward", parse_time);
      if (value[i].contains("backward")) layer.backward = get_quantity(value[i]["backward"], where + ".backward", parse_time);
      layers.push_back(layer);
    }
  } else {
    throw InputError("training.layers: must be a non-empty list of layers or {\"uniform\": {\"count\", \"parameters\", "
                     "\"forward\", \"backward\"}}");
  }
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].forward < 0 || layers[i].backward < 0 || !std::isfinite(layers[i].forward + layers[i].backward))
      throw InputError(fmt::format("training.layers.{}: forward and backward must be times >= 0", i));
  return layers;
}

// training.streams: how many bucket collectives may be in flight at once.
int parse_streams(const json& value, const TrainingSpec& spec) {
  const auto streams = static_cast<int>(get_integer(value, "training.streams", 1, 64));
  if (streams > 1 && !spec.has_layers())
    throw InputError("training.streams: streams run the collectives of gradient buckets at once: give training.layers");
  if (streams > 1 && spec.sharding == Sharding::zero3)
    throw InputError("training.streams: zero3's all-gathers and reduce-scatters follow one recurrence, each gated by a "
                     "layer on the device, on one stream (FSDP's separate all-gather and reduce-scatter streams are not "
                     "modelled); leave streams out or use 1");
  return streams;
}

// A relative spread: a number from 0 to 1.
double parse_sigma(const json& value, const std::string& field) {
  if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 1))
    throw InputError(fmt::format("{}: must be a number from 0 to 1 (the relative spread, e.g. 0.05)", field));
  return value.get<double>();
}

// A measured tail: [[probability, factor], ...] from probability 0 to 1, both increasing.
std::vector<TailPoint> parse_tail(const json& value) {
  const std::string where = "training.noise.table";
  const std::string shape = "a list of [probability, factor] pairs from [0, f0] to [1, f1], probabilities increasing and "
                            "factors > 0 not decreasing, e.g. [[0, 0.98], [0.5, 1], [0.99, 1.1], [1, 1.5]]";
  if (!value.is_array() || value.size() < 2) throw InputError(fmt::format("{}: must be {}", where, shape));
  std::vector<TailPoint> table;
  for (size_t i = 0; i < value.size(); ++i) {
    const json& point = value[i];
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number())
      throw InputError(fmt::format("{}.{}: must be [probability, factor]; the table is {}", where, i, shape));
    table.push_back({point[0].get<double>(), point[1].get<double>()});
    const bool ordered = i == 0 || (table[i].probability > table[i - 1].probability && table[i].factor >= table[i - 1].factor);
    if (!ordered || !(table[i].factor > 0) || !std::isfinite(table[i].factor))
      throw InputError(fmt::format("{}.{}: out of order or not > 0; the table is {}", where, i, shape));
  }
  if (table.front().probability != 0 || table.back().probability != 1)
    throw InputError(fmt::format("{}: must start at probability 0 and end at 1; the table is {}", where, shape));
  return table;
}

// training.noise: {"distribution": "normal" | "lognormal", "sigma": S} or
// {"distribution": "table", "table": [[p, factor], ...]} (training/noise.hpp).
NoiseSpec parse_noise(const json& value) {
  check_keys(value, "training.noise", {"distribution", "sigma", "table"});
  if (!value.contains("distribution"))
    throw InputError("training.noise.distribution: missing; allowed: normal, lognormal, table");
  NoiseSpec noise;
  noise.distribution = noise_distribution_names().parse(get_string(value["distribution"], "training.noise.distribution"),
                                                        "training.noise.distribution");
  const bool table = noise.distribution == NoiseDistribution::table;
  const char* needs = table ? "table" : "sigma";
  const char* other = table ? "sigma" : "table";
  if (noise.distribution != NoiseDistribution::none && !value.contains(needs))
    throw InputError(fmt::format("training.noise.{}: missing for the {} distribution", needs,
                                 noise_distribution_names().name(noise.distribution)));
  if (value.contains(other))
    throw InputError(fmt::format("training.noise.{}: not a parameter of the {} distribution", other,
                                 noise_distribution_names().name(noise.distribution)));
  if (value.contains("sigma")) noise.sigma = parse_sigma(value["sigma"], "training.noise.sigma");
  if (value.contains("table")) noise.table = parse_tail(value["table"]);
  return noise;
}

// training.launch: {"per_collective": TIME, "per_tensor": TIME}.
void parse_launch(const json& value, TrainingSpec& spec) {
  if (!value.is_object())
    throw InputError("training.launch: must be an object such as {\"per_collective\": \"50us\", \"per_tensor\": \"5us\"}");
  check_keys(value, "training.launch", {"per_collective", "per_tensor"});
  if (value.contains("per_collective"))
    spec.launch_per_collective = get_quantity(value["per_collective"], "training.launch.per_collective", parse_time);
  if (value.contains("per_tensor"))
    spec.launch_per_tensor = get_quantity(value["per_tensor"], "training.launch.per_tensor", parse_time);
}

}  // namespace

TrainingSpec parse_training(const json& object) {
  check_keys(object, "training",
             {"rounds", "compute", "model", "parameters", "samples", "learning_rate", "gradient_size", "layers",
              "bucket", "batch", "sharding", "fusion", "overlap", "streams", "noise", "launch", "replay"});
  TrainingSpec spec;
  if (object.contains("rounds")) spec.rounds = static_cast<int>(get_integer(object["rounds"], "training.rounds", 1, 1'000'000));
  if (object.contains("compute")) {
    // "20ms" is a time; "2Gf" is an amount of work at the host's speed (flops).
    const json& compute = object["compute"];
    const std::string text = compute.is_string() ? compute.get<std::string>() : "";
    if (!text.empty() && text.back() == 'f') {
      spec.compute_flops = parse_flops(text, "training.compute");
    } else {
      spec.compute = get_quantity(compute, "training.compute", parse_time);
    }
  }
  if (object.contains("model")) {
    spec.model = get_string(object["model"], "training.model");
    const std::vector<std::string> models{"none", "linear-regression"};
    if (std::find(models.begin(), models.end(), spec.model) == models.end())
      throw InputError(fmt::format("training.model: unknown model '{}'{}; allowed: {}", spec.model,
                                   did_you_mean(spec.model, models), join(models)));
  }
  if (object.contains("parameters"))
    spec.parameters = static_cast<int>(get_integer(object["parameters"], "training.parameters", 1, 1 << 24));
  if (object.contains("samples"))
    spec.samples = static_cast<int>(get_integer(object["samples"], "training.samples", 1, 1 << 26));
  if (object.contains("learning_rate")) {
    if (!object["learning_rate"].is_number() || object["learning_rate"].get<double>() <= 0)
      throw InputError("training.learning_rate: must be a number > 0");
    // The synthetic rows have norms of at most 1 (training/linear_regression.cpp), so the
    // loss's curvature is at most 2: a step up to 1 converges; far above, the weights
    // overflow to inf within a few rounds and nothing is left to verify.
    if (object["learning_rate"].get<double>() > 1)
      throw InputError(fmt::format("training.learning_rate: {} is too large; at most 1 (the data's rows have norms "
                                   "<= 1, so the loss's curvature is <= 2 and a step above 2/2 may diverge)",
                                   object["learning_rate"].get<double>()));
    spec.learning_rate = object["learning_rate"].get<double>();
  }
  if (object.contains("gradient_size")) {
    spec.gradient_size = get_quantity(object["gradient_size"], "training.gradient_size", parse_size);
    if (*spec.gradient_size <= 0) throw InputError("training.gradient_size: must be > 0 bytes");
  }
  if (object.contains("batch"))
    spec.batch = static_cast<int>(get_integer(object["batch"], "training.batch", 1, 1'000'000'000));
  if (object.contains("launch")) parse_launch(object["launch"], spec);
  if (object.contains("layers")) {
    spec.layers = parse_layers(object["layers"], spec.batch);
    if (object.contains("compute"))
      throw InputError("training.compute: the layers give each layer's forward and backward time; leave compute out");
    if (object.contains("gradient_size"))
      throw InputError("training.gradient_size: the layers' parameters set the gradient's size; leave it out");
  }
  if (object.contains("bucket")) {
    if (!spec.has_layers()) throw InputError("training.bucket: buckets group the gradients of layers: give training.layers");
    spec.bucket = get_quantity(object["bucket"], "training.bucket", parse_size);
    if (!(spec.bucket > 0) || !std::isfinite(spec.bucket)) throw InputError("training.bucket: must be a size > 0, e.g. \"25MiB\"");
  }
  if (object.contains("fusion")) {
    if (!spec.has_layers()) throw InputError("training.fusion: fusion groups the gradients of layers: give training.layers");
    if (object.contains("bucket"))
      throw InputError("training.fusion: Horovod's fusion replaces DDP's buckets: give fusion or bucket, not both");
    const json& fusion = object["fusion"];
    check_keys(fusion, "training.fusion", {"buffer", "cycle"});
    for (const char* key : {"buffer", "cycle"})
      if (!fusion.contains(key))
        throw InputError(fmt::format("training.fusion.{}: missing; give {{\"buffer\": SIZE, \"cycle\": TIME}}", key));
    TrainingSpec::Fusion f{get_quantity(fusion["buffer"], "training.fusion.buffer", parse_size),
                           get_quantity(fusion["cycle"], "training.fusion.cycle", parse_time)};
    if (!(f.buffer > 0)) throw InputError("training.fusion.buffer: must be a size > 0, e.g. \"64MiB\"");
    if (!(f.cycle > 0)) throw InputError("training.fusion.cycle: must be a time > 0, e.g. \"5ms\"");
    spec.fusion = f;
  }
  if (object.contains("sharding")) {
    spec.sharding = sharding_names().parse(get_string(object["sharding"], "training.sharding"), "training.sharding");
    if (spec.sharding != Sharding::none && !spec.has_layers())
      throw InputError("training.sharding: sharding splits the gradients of layers: give training.layers");
    if (spec.sharding != Sharding::none && spec.fusion)
      throw InputError("training.sharding: Horovod's fusion is not sharded: leave out fusion or sharding");
    if (spec.sharding != Sharding::none && object.contains("launch"))
      throw InputError("training.launch: not with training.sharding yet (its collectives' launches are not priced); "
                       "leave out launch or sharding");
  }
  if (object.contains("overlap")) {
    spec.overlap = overlap_names().parse(get_string(object["overlap"], "training.overlap"), "training.overlap");
    if (!spec.has_layers()) throw InputError("training.overlap: overlap is between the layers' compute and the buckets: give training.layers");
    if (spec.overlap == Overlap::forward && spec.sharding == Sharding::zero2)
      throw InputError("training.overlap: \"forward\" is for sharding none or zero3 (zero2's all-gathers end the "
                       "iteration); leave it out or use \"backward\"");
  }
  if (object.contains("streams")) spec.streams = parse_streams(object["streams"], spec);
  if (object.contains("noise")) spec.noise = parse_noise(object["noise"]);
  if (object.contains("replay")) {
    if (!object["replay"].is_boolean()) throw InputError("training.replay: must be true or false");
    spec.replay = object["replay"].get<bool>();
  }
  if ((spec.parameters != 1024 || spec.samples || spec.gradient_size || object.contains("learning_rate")) &&
      !spec.has_model())
    throw InputError("training: parameters, samples, learning_rate and gradient_size need \"model\": \"linear-regression\"");
  return spec;
}

}  // namespace collsim
