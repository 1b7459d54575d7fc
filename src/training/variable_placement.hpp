#pragma once
// Parameter servers as TensorFlow deploys them (collective.parameter_server.variables):
// each variable (a layer's tensor) lives whole on one server, so that a server's load is
// the sum of its variables' sizes, not an even shard of the vector. TensorFlow's device
// setters place variables in creation (forward) order: tf.train.replica_device_setter
// round-robin by default (_RoundRobinStrategy, tensorflow/python/training/device_setter.py);
// tf_cnn_benchmarks on the least loaded server so far (scripts/tf_cnn_benchmarks/
// variable_mgr.py: GreedyLoadBalancingStrategy with byte_size_load_fn in its distributed
// modes, ParamServerDeviceSetter by elements in its local one; the first of equals). One
// dtype: bytes and elements order the servers alike.
#include <vector>

#include "algorithms/server_deployment.hpp"
#include "training/iteration.hpp"
#include "util/named_enum.hpp"

namespace collsim {

// split: the vector cut into S even shards (the default); round-robin: variable i on server
// i mod S; least-loaded: each variable on the server holding the fewest elements so far.
enum class VariablePlacement { split, round_robin, least_loaded };
const NamedEnum<VariablePlacement>& variable_placements();

// The sizes of the model's variables in vector (forward) order: each layer's tensors, a
// layer without a table one tensor.
std::vector<uint64_t> model_variables(const std::vector<Layer>& layers);

// The server of each of model_variables(layers), placed `how` (not split) over `servers`.
std::vector<int> place_variables(const std::vector<Layer>& layers, VariablePlacement how, int servers);

// Bucket b's variables (its layers' tensors, in vector order) as pieces of the bucket's
// logical elements, each on its variable's server (`server_of` from place_variables).
ServerPieces bucket_pieces(const std::vector<Layer>& layers, const Bucket& bucket, const std::vector<int>& server_of);

}  // namespace collsim
