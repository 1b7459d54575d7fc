#pragma once
// A GPU's dense bf16 peak and its memory, from its datasheet (cited in gpu_compute.cpp and
// docs/training.md#llm-model-library), by the names of platform/gpu_catalogue.hpp. What a
// step achieves of the peak is not a constant of the GPU: a run states the fraction it
// assumes, and MFU is measured against the peak.
#include <string>
#include <string_view>
#include <vector>

namespace collsim::llm {

struct GpuCompute {
  std::string gpu;               // "h100", as in gpu_catalogue.hpp
  double peak_bf16_flops = 0;    // dense (no 2:4 sparsity), FLOP/s
  double memory_bytes = 0;       // HBM, bytes (the datasheet's GB, 10^9)
  std::string source;            // the datasheet line
};

const std::vector<GpuCompute>& gpu_computes();
// By name; an unknown one is an InputError naming `field` and the allowed names.
const GpuCompute& gpu_compute(std::string_view gpu, std::string_view field);

}  // namespace collsim::llm
