#include "nccl/constants.hpp"

#include <algorithm>
#include <cmath>

#include "util/named_enum.hpp"

// Sources (https://github.com/NVIDIA/nccl/blob/<commit>/<path>):
// [T]  src/graph/tuning.cc, NCCL 2.25.1, commit 80f6bda4378b99d99e82b4d76a633791cc45fef0
// [P]  src/graph/topo.h,    NCCL 2.25.1, commit 80f6bda4378b99d99e82b4d76a633791cc45fef0
// [N]  src/tuning/nvls.cc,  newest stored source, commit 1fc949c50bbd7e31fb27343def456d8d48993a90
//      (after 2.25.1; its version.mk is not stored)
// [D]  src/include/devcomm.h and src/init.cc, NCCL 2.18.3, commit ea38312273e5b9a19a224c9ff4c10b7fcf441eaf
// [K]  src/graph/connect.cc, NCCL 2.21.5, commit ab2b89c4c339bd7f816fbc114a4b05d386b66290
// [C]  src/include/collectives.h, NCCL 2.18.1, commit d97a32fac84f69cbd022ffdc57d5687c760742c7
// [E]  src/enqueue.cc, computeColl / calcCollChunking of the 2.2x planner code (ncclKernelPlanner):
//      NVLSTree's chunk from comm->nvlsChunkSize and ncclParamNvlsTreeMaxChunkSize

namespace collsim::nccl {

namespace {

const NamedEnum<Algo>& algos() {
  static const NamedEnum<Algo> table{"NCCL algorithm",
                                     {{Algo::ring, "Ring"},
                                      {Algo::tree, "Tree"},
                                      {Algo::nvls, "NVLS"},
                                      {Algo::nvls_tree, "NVLSTree"},
                                      {Algo::collnet_direct, "CollNetDirect"},
                                      {Algo::collnet_chain, "CollNetChain"}}};
  return table;
}

const NamedEnum<Proto>& protos() {
  static const NamedEnum<Proto> table{"NCCL protocol", {{Proto::simple, "Simple"}, {Proto::ll, "LL"}, {Proto::ll128, "LL128"}}};
  return table;
}

constexpr int index_of(Proto proto) { return proto == Proto::ll ? 0 : proto == Proto::ll128 ? 1 : 2; }

// Rows of the tables by architecture (compCapIndex: Volta 0, Ampere 1, Hopper 2, Blackwell 3).
constexpr int row_of(GpuArch arch) { return arch == GpuArch::ampere ? 1 : arch == GpuArch::hopper ? 2 : 3; }

}  // namespace

std::string_view algo_name(Algo algo) { return algos().name(algo); }
std::string_view proto_name(Proto proto) { return protos().name(proto); }
Algo parse_algo(std::string_view name, std::string_view field) { return algos().parse(name, field); }
Proto parse_proto(std::string_view name, std::string_view field) { return protos().parse(name, field); }
std::vector<Algo> all_algos() { return algos().values(); }
std::vector<Proto> all_protos() { return protos().values(); }
std::vector<std::string> algo_names() { return algos().names(); }
std::vector<std::string> proto_names() { return protos().names(); }

std::string registry_name(Algo algo) {
  switch (algo) {
    case Algo::ring: return "nccl-ring";
    case Algo::tree: return "nccl-tree";
    case Algo::nvls: return "nccl-nvls";
    case Algo::nvls_tree: return "nccl-nvls-tree";
    case Algo::collnet_direct: return "nccl-collnet-direct";
    case Algo::collnet_chain: return "nccl-collnet-chain";
  }
  return "nccl-ring";
}

bool is_collnet(Algo algo) { return algo == Algo::collnet_direct || algo == Algo::collnet_chain; }

bool reduces_in_switch(Algo algo) { return is_collnet(algo) || algo == Algo::nvls || algo == Algo::nvls_tree; }

std::optional<Algo> algo_of(std::string_view name) {
  for (Algo algo : all_algos())
    if (registry_name(algo) == name) return algo;
  return std::nullopt;
}

// [T] baseLat[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], "Latencies in us", columns LL, LL128,
// Simple: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4}, CollNetDirect, CollNetChain, NVLS,
// NVLSTree all {0, 0, 0}.
double base_latency_us(Algo algo, Proto proto) {
  static constexpr double tree[3] = {6.8, 14.0, 8.4}, ring[3] = {6.6, 14.0, 8.4};
  switch (algo) {
    case Algo::tree: return tree[index_of(proto)];
    case Algo::ring: return ring[index_of(proto)];
    case Algo::collnet_direct:
    case Algo::collnet_chain:
    case Algo::nvls:
    case Algo::nvls_tree: return 0;
  }
  return 0;
}

// [T] hwLat[NCCL_HW_NVLINK | PCI | NET][algo][proto], us, columns LL, LL128, Simple.
double hop_latency_us(Hw hw, Algo algo, Proto proto) {
  struct Row {
    double tree[3], ring[3], collnet_direct[3], collnet_chain[3], nvls[3], nvls_tree[3];
  };
  static constexpr Row nvlink{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}};
  static constexpr Row pci{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}};
  static constexpr Row net{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}};
  const Row& row = hw == Hw::nvlink ? nvlink : hw == Hw::pci ? pci : net;
  const int p = index_of(proto);
  switch (algo) {
    case Algo::tree: return row.tree[p];
    case Algo::ring: return row.ring[p];
    case Algo::collnet_direct: return row.collnet_direct[p];
    case Algo::collnet_chain: return row.collnet_chain[p];
    case Algo::nvls: return row.nvls[p];
    case Algo::nvls_tree: return row.nvls_tree[p];
  }
  return 0;
}

// [P] SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.0 (GB/s per link).
double nvlink_link_bandwidth_gbs(GpuArch arch) {
  switch (arch) {
    case GpuArch::ampere: return 20.0;
    case GpuArch::hopper: return 20.6;
    case GpuArch::blackwell: return 40.0;
  }
  return 20.0;
}

int node_column(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

// [T] llMaxBws[][3]: {39.0, 39.0, 20.4} (Volta-N1 / Intel-N2 / Intel-N4), {87.7, 22.5, 19.0}
// (Ampere-N1 / AMD-N2 / AMD-N4), {141.0, 45.0, 35.0} (Hopper-N1 / AMD-N2 / AMD-N4),
// {2*141.0, 2*45.0, 2*35.0} (Blackwell-N1 / AMD-N2 / AMD-N4); index1 = nNodes == 1 ?
// compCapIndex : (cpuVendor == AMD ? 1 : 0).
double ll_max_bandwidth_gbs(GpuArch arch, CpuVendor cpu, int nodes) {
  static constexpr double table[4][3] = {
      {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}};
  const int row = nodes == 1 ? row_of(arch) : (cpu == CpuVendor::amd ? 1 : 0);
  return table[row][node_column(nodes)];
}

// [T] perChMaxRingLL128Bws: Ampere {20.0, 20.0, 20.0}, Hopper {36.7, 36.7, 36.7},
// Blackwell {2*36.7, 2*36.7, 2*36.7}.
double ring_ll128_channel_max_gbs(GpuArch arch, int nodes) {
  static constexpr double table[3][3] = {{20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 2 * 36.7, 2 * 36.7}};
  return table[row_of(arch) - 1][node_column(nodes)];
}

// [T] perChMaxTreeBws: Ampere {24.0, 23.6, 17.8}, Hopper {38.7, 41.4, 36.0}, Blackwell
// {2*38.7, 2*41.4, 2*36.0}.
double tree_channel_max_gbs(GpuArch arch, int nodes) {
  static constexpr double table[3][3] = {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {2 * 38.7, 2 * 41.4, 2 * 36.0}};
  return table[row_of(arch) - 1][node_column(nodes)];
}

// [T] perChMaxTreeLL128Bws: Ampere {20.0, 20.0, 20.0}, Hopper {36.7, 36.7, 29.0},
// Blackwell {2*36.7, 2*36.7, 2*29.0}.
double tree_ll128_channel_max_gbs(GpuArch arch, int nodes) {
  static constexpr double table[3][3] = {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {2 * 36.7, 2 * 36.7, 2 * 29.0}};
  return table[row_of(arch) - 1][node_column(nodes)];
}

// [N] nvlsEfficiency[] = {0.0f /*Volta*/, 0.0f /*Ampere*/, 0.85f /*Hopper*/, 0.74f /*Blackwell*/}.
double nvls_efficiency(GpuArch arch) {
  switch (arch) {
    case GpuArch::ampere: return 0.0;
    case GpuArch::hopper: return 0.85;
    case GpuArch::blackwell: return 0.74;
  }
  return 0.0;
}

// [T] getNetOverhead: x86 Intel 1.0, x86 AMD 2.0, otherwise 1.0 (us).
double net_overhead_us(CpuVendor cpu) { return cpu == CpuVendor::amd ? 2.0 : 1.0; }

// [T] ncclTopoTuneModel, "Various model refinements": Ring/LL busBw * .5, Ring/LL128 busBw
// * 0.92 /*120.0/128.0*/, Tree busBw * .92, Tree/LL busBw * 1.0/3.8, Tree/LL128 busBw *
// (nNodes == 1 ? 7.0/9.0 : 120.0/128.0); [N] NVLS and NVLSTree bwIntra * nvlsEfficiency.
double protocol_efficiency(Algo algo, Proto proto, GpuArch arch, int nodes) {
  switch (algo) {
    case Algo::ring: return proto == Proto::ll ? 0.5 : proto == Proto::ll128 ? 0.92 : 1.0;
    case Algo::tree:
      if (proto == Proto::ll) return 0.92 / 3.8;
      if (proto == Proto::ll128) return 0.92 * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
      return 0.92;
    case Algo::nvls:
    case Algo::nvls_tree: return nvls_efficiency(arch);
    case Algo::collnet_direct:
    case Algo::collnet_chain: return 1.0;
  }
  return 1.0;
}

// [T] treeCorrectionFactor[NCCL_NUM_PROTOCOLS][23], "Powers of two, 64 B to 256MB", rows LL,
// LL128, Simple, index log2i(nBytes >> 6), applied when the index is below 23.
double tree_correction(Proto proto, double bytes) {
  static constexpr double table[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  // 2.25.1 applies it from index 0 (64 bytes) on
  const double units = std::floor(bytes / 64);
  if (units < 1) return 1.0;
  const int log_size = static_cast<int>(std::floor(std::log2(units)));
  return log_size < 23 ? table[index_of(proto)][log_size] : 1.0;
}

// [D] DEFAULT_BUFFSIZE (1 << 22), the LL and LL128 buffers, NCCL_STEPS 8; [C]
// ALLREDUCE_CHUNKSTEPS (NCCL_STEPS/2) for Ring/Simple (1 step for the others); LL's
// chunkEffectiveSize is half its chunk, LL128's 15/16 (enqueue.cc, computeColl).
double chunk_bytes(Algo algo, Proto proto) {
  switch (proto) {
    case Proto::ll: return ll_buffer / steps / 2;
    case Proto::ll128: return ll128_buffer / steps * 15 / 16;
    case Proto::simple: break;
  }
  const double step = simple_buffer / steps;
  if (algo == Algo::ring) return step * (steps / 2);
  // NVLS: "chunkSize <= 131072" (enqueue.cc 2.18.1, computeColl)
  if (algo == Algo::nvls || algo == Algo::nvls_tree) return 131072;
  return step;
}

namespace {

// [C], [E] computeColl / calcCollChunking: CollNetDirect from Simple's step, halved while
// bytes / (channels x heads x chunk) is below depth x 64 above 131072, then depth x 8 above
// 65536 and above 32768, every GPU a head (one NIC each) and depth 2 (1 with one GPU per node,
// [K]: "(nUp == 0 && nDown == 0) ? 1 : 2"); CollNetChain from min(256 KiB, the step),
// halved while bytes / (channels x chunk) is below depth x 64 above 131072, depth x 8 above
// 65536, depth above 32768, depth = nRanks / nNodes ([K], collnetChain.depth).
double collnet_chunk_bytes(Algo algo, double bytes, int channels, double ppn) {
  const double step = simple_buffer / steps;
  if (algo == Algo::collnet_direct) {
    const double depth = ppn > 1 ? 2 : 1;
    auto loops = [&](double chunk) { return std::floor(bytes / (channels * ppn * chunk)); };
    double chunk = step;
    while (loops(chunk) < depth * 64 && chunk > 131072) chunk /= 2;
    while (loops(chunk) < depth * 8 && chunk > 65536) chunk /= 2;
    while (loops(chunk) < depth * 8 && chunk > 32768) chunk /= 2;
    return chunk;
  }
  auto loops = [&](double chunk) { return std::floor(bytes / (channels * chunk)); };
  double chunk = std::min(256.0 * 1024, step);
  while (loops(chunk) < ppn * 64 && chunk > 131072) chunk /= 2;
  while (loops(chunk) < ppn * 8 && chunk > 65536) chunk /= 2;
  while (loops(chunk) < ppn && chunk > 32768) chunk /= 2;
  return chunk;
}

}  // namespace

// [C] computeColl (enqueue.cc 2.18.1): Tree/Simple "while (nBytes / (nChannels*chunkSize) <
// depth*8 && chunkSize > 131072) chunkSize /= 2", then depth*4 above 65536 and depth above
// 32768, depth = nRanks/nNodes - 1 + log2i(nNodes) (trees.cc); Tree/LL128: nstepsLL128 = 1 +
// log2i(nNodes) + 0.1 ppn, halved while below nstepsLL128*64/ppn above 131072 and
// nstepsLL128*16/ppn above 32768; NVLS: at most 131072, then 65536, 32768, 16384 while nBytes is
// below 64, 8, 2 x concurrentOps x chunkSize (concurrentOps = nChannels x nHeads); [E] NVLSTree:
// 65536, 32768 while nBytes is below 4, 1 x concurrentOps x chunkSize.
double pipeline_chunk_bytes(Algo algo, Proto proto, double bytes, int channels, int ranks, int nodes) {
  const double ppn = static_cast<double>(ranks / std::max(1, nodes));
  const int log_nodes = nodes <= 1 ? 0 : static_cast<int>(std::floor(std::log2(nodes)));
  auto loops = [&](double chunk) { return std::floor(bytes / (channels * chunk)); };
  if (algo == Algo::tree && proto == Proto::simple) {
    const double depth = ppn - 1 + log_nodes;
    double chunk = simple_buffer / steps;
    while (loops(chunk) < depth * 8 && chunk > 131072) chunk /= 2;
    while (loops(chunk) < depth * 4 && chunk > 65536) chunk /= 2;
    while (loops(chunk) < depth && chunk > 32768) chunk /= 2;
    return chunk;
  }
  if (algo == Algo::tree && proto == Proto::ll128) {
    const double n_steps = 1 + log_nodes + 0.1 * ppn;
    double chunk = ll128_buffer / steps;
    while (loops(chunk) < n_steps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (loops(chunk) < n_steps * 16 / ppn && chunk > 32768) chunk /= 2;
    return chunk * 15 / 16;
  }
  if (is_collnet(algo)) return collnet_chunk_bytes(algo, bytes, channels, ppn);
  const double operations = channels * ppn;
  if (algo == Algo::nvls) {
    double chunk = 131072;
    if (bytes < 64 * operations * chunk) chunk = 65536;
    if (bytes < 8 * operations * chunk) chunk = 32768;
    if (bytes < 2 * operations * chunk) chunk = 16384;
    return chunk;
  }
  if (algo == Algo::nvls_tree) {
    // [E] NCCL_NVLS_CHUNKSIZE (128 KiB), at most 64 KiB from 4 nodes (NCCL_NVLSTREE_MAX_CHUNKSIZE
    // -2); the 262144 and 131072 steps cannot apply below that
    double chunk = nodes >= 4 ? 65536 : 131072;
    if (bytes < 4 * operations * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 1 * operations * chunk && chunk > 32768) chunk = 32768;
    return chunk;
  }
  return chunk_bytes(algo, proto);
}

// A tree's chunk is a step of every protocol; it passes each hop cut-through (line by line in
// LL and LL128), which algorithms/nccl_trees.hpp models whatever the chunk's size.
int fifo_chunks(Algo algo, Proto proto) {
  return algo == Algo::ring && proto == Proto::simple ? steps / (steps / 2) : steps;
}

}  // namespace collsim::nccl
