#include "llm/gpu_compute.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim::llm {

// Dense bf16 tensor-core peaks: NVIDIA's datasheets print the 2:4-sparse figure with a
// footnote ("With sparsity"); the dense peak is half of it.
const std::vector<GpuCompute>& gpu_computes() {
  static const std::vector<GpuCompute> table{
      // NVIDIA A100 Tensor Core GPU datasheet (2021): "BF16 Tensor Core 312 TFLOPS | 624
      // TFLOPS*" (* with sparsity), "GPU Memory 80GB HBM2e" (A100 80GB SXM).
      {"a100", 312e12, 80e9, "A100 SXM 80GB datasheet: BF16 Tensor Core 312 TFLOPS dense, 80 GB HBM2e"},
      // NVIDIA H100 Tensor Core GPU datasheet: H100 SXM "BF16 Tensor Core 1,979 teraFLOPS"
      // (footnote: with sparsity) = 989.5 dense, "GPU memory 80GB".
      {"h100", 1979e12 / 2, 80e9, "H100 SXM datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity (989.5 dense), 80 GB HBM3"},
      // NVIDIA H200 Tensor Core GPU datasheet: H200 SXM "BF16 Tensor Core 1,979 TFLOPS"
      // (with sparsity), "GPU Memory 141GB".
      {"h200", 1979e12 / 2, 141e9, "H200 SXM datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity (989.5 dense), 141 GB HBM3e"},
      // collsim's b200 is the GPU of its gb200-nvl72 node: NVIDIA GB200 NVL72 datasheet,
      // "FP16/BF16 Tensor Core 360 PFLOPS" (with sparsity) and "up to 13.4 TB HBM3e" for
      // 72 GPUs: 2.5 PFLOPS dense and 186 GB each.
      {"b200", 360e15 / 72 / 2, 13.4e12 / 72,
       "GB200 NVL72 datasheet: FP16/BF16 360 PFLOPS with sparsity and 13.4 TB HBM3e for 72 GPUs (2.5 PFLOPS dense, 186 GB each)"},
  };
  return table;
}

const GpuCompute& gpu_compute(std::string_view gpu, std::string_view field) {
  std::vector<std::string> names;
  for (const auto& entry : gpu_computes()) {
    if (entry.gpu == gpu) return entry;
    names.push_back(entry.gpu);
  }
  throw InputError(fmt::format("{}: unknown GPU '{}'{}; allowed: {}", field, gpu, did_you_mean(gpu, names), join(names)));
}

}  // namespace collsim::llm
