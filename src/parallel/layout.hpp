#pragma once
// Where each world rank sits in a tensor x pipeline x data (x expert) layout, and the
// groups of each dimension, in Megatron-LM's rank order (megatron/core/parallel_state.py,
// initialize_model_parallel, order "tp-cp-ep-dp-pp", context parallelism 1): tensor fastest,
// then data, then pipeline,
//
//     world = t + T x (d + D x s)        t < T tensor, d < D data, s < P pipeline stage
//
// and the expert groups carved out of the data dimension as Megatron's expert rank generator
// does (expert tensor size = T): blocks of E consecutive data indices, d = e + E x d'. World
// rank r runs on the platform's r-th host (or the scenario's placement[r]), so on a platform
// whose hosts are numbered node by node a tensor group of T <= GPUs per node stays inside one
// node, as Megatron intends.
#include <vector>

#include "scenario/parallelism_spec.hpp"

namespace collsim {

struct LayoutCoordinates {
  int tensor = 0, data = 0, pipeline = 0;
  int expert = 0;  // the rank's place in its expert group: data mod E
};

LayoutCoordinates coordinates_of(const ParallelismSpec& layout, int world);
int world_rank_of(const ParallelismSpec& layout, int tensor, int data, int pipeline);

// Every group of `dimension`, each listing its world ranks in group-rank order; groups in
// the order of their lowest world rank's other coordinates (Megatron's group order).
std::vector<std::vector<int>> dimension_groups(const ParallelismSpec& layout, Dimension dimension);

// The groups a parallel collective runs in: its dimension's, or its explicit lists.
std::vector<std::vector<int>> collective_groups(const ParallelismSpec& layout, const ParallelCollective& collective);

}  // namespace collsim
