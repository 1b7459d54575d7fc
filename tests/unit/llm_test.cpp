// The LLM model library (src/llm/) against figures computed another way: the papers' own
// closed forms, their printed tables, and hand-worked cases.
#include <cmath>
#include <doctest/doctest.h>

#include "llm/gpu_compute.hpp"
#include "llm/layer_costs.hpp"
#include "llm/memory.hpp"
#include "llm/transformer.hpp"
#include "util/errors.hpp"

using namespace collsim;
using namespace collsim::llm;

namespace {

TransformerModel preset(const char* name) { return transformer_preset(name, "model"); }

// The same value printed with `decimals` decimals, as a paper prints it.
double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace

TEST_CASE("llm: GPT-3 175B counted as Narayanan et al.'s closed form, 175.0B as published") {
  const auto m = preset("gpt3-175b");
  const double l = m.layers, h = m.hidden, V = m.vocab, s = m.sequence;
  // Narayanan et al. SC'21 sec. 5.1: P = 12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)); it
  // leaves out the final LayerNorm (2h).
  const double closed_form = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  CHECK(static_cast<double>(total_parameters(m)) == doctest::Approx(closed_form + 2 * h).epsilon(1e-12).scale(0));
  CHECK(total_parameters(m) == 174'604'259'328ull);  // 96 (12 h^2 + 13 h) + (50257 + 2048) h + 2h, by hand
  // Table 2.1 prints 175.0B: the shape gives 174.6B, 0.23% under (the name's nominal size).
  CHECK(static_cast<double>(total_parameters(m)) == doctest::Approx(175.0e9).epsilon(0.003).scale(0));
}

TEST_CASE("llm: Narayanan et al. SC'21 Table 1's ten GPT models, to the printed 0.1 billion") {
  struct Row { int hidden, layers, heads; double billions; };
  // Table 1: hidden size, layers, attention heads, parameters (billion); vocabulary 51,200
  // and sequence 2048 for all (sec. 5.1).
  const Row rows[] = {{2304, 24, 24, 1.7},     {3072, 30, 32, 3.6},     {4096, 36, 32, 7.5},    {6144, 40, 48, 18.4},
                      {8192, 48, 64, 39.1},    {10240, 60, 80, 76.1},   {12288, 80, 96, 145.6}, {16384, 96, 128, 310.1},
                      {20480, 105, 128, 529.6}, {25600, 128, 160, 1008.0}};
  for (const Row& row : rows) {
    auto m = preset("gpt3-175b");
    m.hidden = row.hidden, m.ffn_hidden = 4 * row.hidden, m.layers = row.layers, m.heads = m.kv_heads = row.heads;
    m.vocab = 51200;
    CAPTURE(row.hidden);
    CHECK(rounded(static_cast<double>(total_parameters(m)) / 1e9, 1) == doctest::Approx(row.billions).epsilon(1e-9));
  }
}

TEST_CASE("llm: Llama 3 counted term by term, within 1% of the sizes Table 3 names") {
  struct Row { const char* name; double L, h, f, heads, published; };
  const Row rows[] = {{"llama3-8b", 32, 4096, 14336, 32, 8e9},
                      {"llama3-70b", 80, 8192, 28672, 64, 70e9},
                      {"llama3-405b", 126, 16384, 53248, 128, 405e9}};
  for (const Row& row : rows) {
    CAPTURE(row.name);
    const double V = 128256, kv = row.h / row.heads * 8;
    // Q and O h x h, K and V h x kv, SwiGLU 3 h f, two RMSNorms; embedding and output
    // untied; a final RMSNorm.
    const double count = row.L * (2 * row.h * row.h + 2 * row.h * kv + 3 * row.h * row.f + 2 * row.h) + 2 * V * row.h + row.h;
    const auto m = preset(row.name);
    CHECK(static_cast<double>(total_parameters(m)) == count);
    CHECK(count == doctest::Approx(row.published).epsilon(0.01).scale(0));
  }
  CHECK(total_parameters(preset("llama3-8b")) == 8'030'261'248ull);  // by hand: 32 x 218,112,000 + 2 x 525,336,576 + 4096
}

TEST_CASE("llm: Mixtral 8x7B: 47B parameters, 13B active (Jiang et al. 2024 sec. 2)") {
  const auto m = preset("mixtral-8x7b");
  const double h = 4096, f = 14336, kv = 1024, V = 32000;
  const double attention = 2 * h * h + 2 * h * kv, expert = 3 * h * f, router = h * 8, norms = 2 * h;
  CHECK(static_cast<double>(total_parameters(m)) == 32 * (attention + 8 * expert + router + norms) + 2 * V * h + h);
  CHECK(static_cast<double>(active_parameters(m)) == 32 * (attention + 2 * expert + router + norms) + 2 * V * h + h);
  CHECK(static_cast<double>(total_parameters(m)) == doctest::Approx(47e9).epsilon(0.01).scale(0));
  CHECK(static_cast<double>(active_parameters(m)) == doctest::Approx(13e9).epsilon(0.01).scale(0));
}

TEST_CASE("llm: FLOPs per step are Narayanan et al.'s eq. 3 with full recomputation") {
  const auto m = preset("gpt3-175b");
  const double B = m.global_batch, s = m.sequence, l = m.layers, h = m.hidden, V = m.vocab;
  const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  CHECK(hardware_flops_per_step(m, Recompute::full) == doctest::Approx(eq3).epsilon(1e-12).scale(0));
  // Without recomputation three passes instead of four over the blocks: 72 B s l h^2 (1 + s/6h) + 6 B s h V.
  const double three = 72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
  CHECK(model_flops_per_step(m) == doctest::Approx(three).epsilon(1e-12).scale(0));
  CHECK(hardware_flops_per_step(m, Recompute::none) == model_flops_per_step(m));
  // Selective recomputation redoes QK^T and AV only: 4 b s^2 h per block.
  CHECK(hardware_flops_per_step(m, Recompute::selective) - model_flops_per_step(m) ==
        doctest::Approx(B * l * 4 * s * s * h).epsilon(1e-9).scale(0));
}

TEST_CASE("llm: a block's per-GPU FLOPs and tensor collectives (Megatron, Korthikanti et al.)") {
  const auto m = preset("gpt3-175b");
  Layout layout;
  layout.tensor = 8;
  const double b = m.micro_batch, s = m.sequence, h = m.hidden;
  const LayerCosts costs = layer_costs(m, layout);
  CHECK(costs.forward_flops == doctest::Approx((24 * b * s * h * h + 4 * b * s * s * h) / 8).epsilon(1e-12).scale(0));
  CHECK(costs.backward_flops == 2 * costs.forward_flops);
  CHECK(costs.recompute_flops == 0);
  REQUIRE(costs.forward_collectives.size() == 2);
  REQUIRE(costs.backward_collectives.size() == 2);
  for (const auto& c : costs.forward_collectives) {
    CHECK(c.kind == Collective::allreduce);
    CHECK(c.bytes == 2 * b * s * h);
  }
  layout.sequence_parallel = true;
  layout.recompute = Recompute::full;
  const LayerCosts sp = layer_costs(m, layout);
  REQUIRE(sp.forward_collectives.size() == 4);
  CHECK(sp.forward_collectives[0].kind == Collective::allgather);
  CHECK(sp.forward_collectives[1].kind == Collective::reduce_scatter);
  CHECK(sp.backward_collectives.size() == 8);  // the recomputed forward's four, then backward's four
  CHECK(sp.recompute_flops == sp.forward_flops);
  // with sequence parallelism each of the t tensor ranks sends its s / t of the sequence
  // to its peer in the next stage (Megatron's get_tensor_shapes); without, the whole b s h
  CHECK(pipeline_message_bytes(m, layout) == 2 * b * (s / 8) * h);
  CHECK_FALSE(pipeline_gathers(layout));
  layout.sequence_parallel = false;
  CHECK(pipeline_message_bytes(m, layout) == 2 * b * s * h);
  CHECK_FALSE(pipeline_gathers(layout));
  // Megatron-LM's scatter/gather (2021-22): 1/t of the flattened tensor, all-gathered on arrival
  layout.pipeline_scatter_gather = true;
  CHECK(pipeline_message_bytes(m, layout) == 2 * b * s * h / 8);
  CHECK(pipeline_gathers(layout));
  layout.sequence_parallel = true;  // with sequence parallelism Megatron sends s / t and gathers nothing
  CHECK(pipeline_message_bytes(m, layout) == 2 * b * (s / 8) * h);
  CHECK_FALSE(pipeline_gathers(layout));
  layout.sequence_parallel = false, layout.pipeline_scatter_gather = false;
  layout.tensor = 1;
  CHECK(layer_costs(m, layout).forward_collectives.empty());
  layout.sequence_parallel = true;
  CHECK(pipeline_message_bytes(m, layout) == 2 * b * s * h);
}

TEST_CASE("llm: activations per block are Korthikanti et al. 2022 Table 2") {
  auto m = preset("gpt3-175b");
  m.micro_batch = 2;
  const double s = m.sequence, b = m.micro_batch, h = m.hidden, a = m.heads, t = 8;
  Layout layout;
  layout.tensor = 8;
  const auto bytes = [&](bool sp, Recompute r) {
    layout.sequence_parallel = sp;
    layout.recompute = r;
    return layer_costs(m, layout).activation_bytes;
  };
  CHECK(bytes(false, Recompute::none) == doctest::Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-12).scale(0));
  CHECK(bytes(true, Recompute::none) == doctest::Approx(s * b * h / t * (34 + 5 * a * s / h)).epsilon(1e-12).scale(0));
  CHECK(bytes(false, Recompute::selective) == doctest::Approx(s * b * h * (10 + 24 / t)).epsilon(1e-12).scale(0));
  CHECK(bytes(true, Recompute::selective) == doctest::Approx(s * b * h * 34 / t).epsilon(1e-12).scale(0));
  CHECK(bytes(false, Recompute::full) == 2 * s * b * h);
  layout.tensor = 1;
  CHECK(bytes(false, Recompute::none) == doctest::Approx(s * b * h * (34 + 5 * a * s / h)).epsilon(1e-12).scale(0));
}

TEST_CASE("llm: GPU peaks from the datasheets, and the published MFU they give") {
  CHECK(gpu_compute("a100", "gpu").peak_bf16_flops == 312e12);
  CHECK(gpu_compute("h100", "gpu").peak_bf16_flops == 989.5e12);
  CHECK(gpu_compute("h100", "gpu").memory_bytes == 80e9);
  // Narayanan et al. SC'21 Table 1: 163 TFLOP/s per A100 is "52%" of peak; 137 is "44%".
  CHECK(rounded(163e12 / gpu_compute("a100", "gpu").peak_bf16_flops * 100, 0) == 52);
  CHECK(rounded(137e12 / gpu_compute("a100", "gpu").peak_bf16_flops * 100, 0) == 44);
  // Llama 3 Table 4: 430 TFLOPs/GPU on 8,192 H100 is 43% MFU, 380 on 16,384 is 38%.
  CHECK(rounded(430e12 / gpu_compute("h100", "gpu").peak_bf16_flops * 100, 0) == 43);
  CHECK(rounded(380e12 / gpu_compute("h100", "gpu").peak_bf16_flops * 100, 0) == 38);
  CHECK_THROWS_WITH_AS(gpu_compute("h1000", "gpu"), doctest::Contains("gpu: unknown GPU 'h1000' (did you mean 'h100'?)"), InputError);
}

TEST_CASE("llm: presets by name, and shapes that cannot be a model") {
  CHECK(transformer_preset_names().size() == transformer_presets().size());
  CHECK_THROWS_WITH_AS(transformer_preset("llama3-7b", "model"), doctest::Contains("model: unknown model 'llama3-7b'"), InputError);
  for (const auto& m : transformer_presets()) CHECK_NOTHROW(check_transformer(m, "model"));
  auto m = preset("tiny");
  m.heads = 7;
  CHECK_THROWS_WITH_AS(check_transformer(m, "model"), "model: heads (7) must divide hidden (256)", InputError);
  m = preset("tiny");
  m.kv_heads = 3;
  CHECK_THROWS_AS(check_transformer(m, "model"), InputError);
  m = preset("tiny");
  m.global_batch = 3, m.micro_batch = 2;
  CHECK_THROWS_AS(check_transformer(m, "model"), InputError);
  CHECK(parse_recompute("selective", "recompute") == Recompute::selective);
  CHECK_THROWS_AS(parse_recompute("partial", "recompute"), InputError);
}

TEST_CASE("llm: stages' blocks, the fewer on the first and last (Llama 3 sec. 3.3.2)") {
  const auto layers = stage_layers(preset("llama3-405b"), 16);
  REQUIRE(layers.size() == 16);
  CHECK(layers.front() == 7);
  CHECK(layers.back() == 7);
  for (size_t stage = 1; stage + 1 < layers.size(); ++stage) CHECK(layers[stage] == 8);
  CHECK(stage_layers(preset("gpt3-175b"), 12) == std::vector<int>(12, 8));
  CHECK(stage_layers(preset("tiny"), 3) == std::vector<int>{1, 2, 1});
}

TEST_CASE("llm: model states per GPU are ZeRO's 16, 4 + 12/N, 2 + 14/N and 16/N bytes per parameter") {
  // Rajbhandari et al. 2020 Fig. 1: (2 + 2 + K) P, 2P + 2P + K P / Nd, 2P + (2 + K) P / Nd,
  // (2 + 2 + K) P / Nd with K = 12.
  const auto m = preset("llama3-8b");
  const double P = static_cast<double>(total_parameters(m)), N = 64;
  Layout layout;
  layout.data = 64;
  const auto states = [&](int zero) {
    layout.zero_stage = zero;
    const MemoryPerGpu memory = memory_per_gpu(m, layout);
    return memory.weights + memory.gradients + memory.optimizer;
  };
  CHECK(states(0) == doctest::Approx(16 * P).epsilon(1e-12).scale(0));
  CHECK(states(1) == doctest::Approx(4 * P + 12 * P / N).epsilon(1e-12).scale(0));
  CHECK(states(2) == doctest::Approx(2 * P + 14 * P / N).epsilon(1e-12).scale(0));
  CHECK(states(3) == doctest::Approx(16 * P / N).epsilon(1e-12).scale(0));
}

TEST_CASE("llm: GPT-3 175B on TP 8 x PP 12 with full recomputation, by hand") {
  const auto m = preset("gpt3-175b");
  Layout layout;
  layout.tensor = 8, layout.pipeline = 12, layout.recompute = Recompute::full;
  CHECK(micro_batches(m, layout) == 1536);
  // Stage 0: 8 blocks of 1,812,099,072 over 8 GPUs, and the embedding (50257 + 2048) x 12288 / 8.
  CHECK(parameters_on_gpu(m, layout, 0) == 1'812'099'072.0 + 80'340'480.0);
  // The last: 8 blocks, the final LayerNorm and the tied embedding's copy, (2 + 50257) x 12288 / 8.
  CHECK(parameters_on_gpu(m, layout, 11) == 1'812'099'072.0 + 77'197'824.0);
  const MemoryPerGpu memory = memory_per_gpu(m, layout);
  CHECK(memory.stage == 0);
  CHECK(memory.weights + memory.gradients + memory.optimizer == 16 * 1'892'439'552.0);
  // 12 micro-batches in flight x 8 blocks x 2 s b h, and one block rebuilt: s b h (10 + 24/8 + 5 a s / (h 8)) = 23 s b h.
  const double sbh = 2048.0 * 12288;
  CHECK(memory.activations == doctest::Approx(12 * 8 * 2 * sbh + 23 * sbh).epsilon(1e-12).scale(0));
  CHECK(memory.total() == doctest::Approx(35'689'684'992.0).epsilon(1e-12).scale(0));
}

TEST_CASE("llm: Narayanan et al. SC'21 sec. 5.1's training times, 34 and 84 days, from the counted parameters") {
  // Their estimate: time = 8 T P / (n X) (eq. 4: eq. 3 without the s/6h and V/16lh terms).
  const auto days = [](double tokens, double parameters, double gpus, double flops_per_gpu) {
    return 8 * tokens * parameters / (gpus * flops_per_gpu) / 86400;
  };
  const double gpt3 = static_cast<double>(total_parameters(preset("gpt3-175b")));
  CHECK(rounded(days(300e9, gpt3, 1024, 140e12), 0) == 34);  // GPT-3: 300 B tokens, 1024 A100 at 140 TFLOP/s
  auto trillion = preset("gpt3-175b");  // Table 1's last row: h 25600, 128 layers, 160 heads, V 51200
  trillion.hidden = 25600, trillion.ffn_hidden = 4 * 25600, trillion.layers = 128, trillion.heads = trillion.kv_heads = 160;
  trillion.vocab = 51200;
  CHECK(rounded(days(450e9, static_cast<double>(total_parameters(trillion)), 3072, 163e12), 0) == 84);
}

TEST_CASE("llm: Llama 3 405B: 3.8 x 10^25 training FLOPs, and Table 4's layout fits only with sharded states") {
  const auto m = preset("llama3-405b");
  // Sec. 1 and 3.2.1: 405B parameters on 15.6T tokens, 3.8 x 10^25 FLOPs: 6 N T.
  CHECK(rounded(6 * static_cast<double>(total_parameters(m)) * 15.6e12 / 1e25, 1) == 3.8);
  // Table 4: TP 8, PP 16, DP 64 on 8,192 H100 of 80 GB; FSDP shards the optimizer states
  // and the gradients (sec. 3.3.2: ZeRO-2); sequence parallelism; attention recomputed.
  Layout layout;
  layout.tensor = 8, layout.pipeline = 16, layout.data = 64, layout.sequence_parallel = true;
  layout.recompute = Recompute::selective, layout.zero_stage = 2;
  CHECK(micro_batches(m, layout) == 32);  // Table 4's batch size per DP, 32
  const double memory = gpu_compute("h100", "gpu").memory_bytes;
  CHECK(memory_per_gpu(m, layout).total() < memory);
  layout.zero_stage = 0;  // every state on every replica: 16 bytes x 405.85 B / 128 GPUs is already 50.7 GB
  CHECK(memory_per_gpu(m, layout).total() > memory);
}

TEST_CASE("llm: Narayanan et al. SC'21 Table 1's layouts fit 80 GB A100 with recomputation, the 1T one only with it") {
  struct Row { int hidden, layers, heads, tensor, pipeline, gpus, batch; };
  // Table 1: hidden, layers, heads, tensor and pipeline sizes, GPUs, batch size; they train
  // with activation recomputation (sec. 3.5); micro-batch 1 assumed (the table gives none).
  const Row rows[] = {{2304, 24, 24, 1, 1, 32, 512},       {3072, 30, 32, 2, 1, 64, 512},
                      {4096, 36, 32, 4, 1, 128, 512},      {6144, 40, 48, 8, 1, 256, 1024},
                      {8192, 48, 64, 8, 2, 512, 1536},     {10240, 60, 80, 8, 4, 1024, 1792},
                      {12288, 80, 96, 8, 8, 1536, 2304},   {16384, 96, 128, 8, 16, 1920, 2160},
                      {20480, 105, 128, 8, 35, 2520, 2520}, {25600, 128, 160, 8, 64, 3072, 3072}};
  const double memory = gpu_compute("a100", "gpu").memory_bytes;
  for (const Row& row : rows) {
    auto m = preset("gpt3-175b");
    m.hidden = row.hidden, m.ffn_hidden = 4 * row.hidden, m.layers = row.layers, m.heads = m.kv_heads = row.heads;
    m.vocab = 51200, m.global_batch = row.batch;
    Layout layout;
    layout.tensor = row.tensor, layout.pipeline = row.pipeline, layout.data = row.gpus / (row.tensor * row.pipeline);
    layout.recompute = Recompute::full;
    CAPTURE(row.hidden);
    CHECK(layout.gpus() == row.gpus);
    CHECK(memory_per_gpu(m, layout).total() < memory);
    if (row.hidden == 25600) {
      layout.recompute = Recompute::none;
      CHECK(memory_per_gpu(m, layout).total() > memory);
    }
  }
}
