#pragma once
// NCCL's own tuning constants, as NCCL's source prints them (the tables of its cost model,
// src/graph/tuning.cc and src/graph/topo.h; each value cited in constants.cpp with file,
// commit and version, and in docs/nccl.md). collsim models NCCL 2.25.1 (tuning.cc and
// topo.h at commit 80f6bda4); where 2.25.1 has no figure (NVLS's bandwidth efficiency) the
// newest stored source gives it. Nothing here is fitted to a measurement.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/gpu_catalogue.hpp"

namespace collsim::nccl {

// NCCL's algorithms and protocols, by NCCL's names (NCCL_ALGO, NCCL_PROTO).
enum class Algo { tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree };
enum class Proto { ll, ll128, simple };
// NCCL's hardware classes of a hop (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class Hw { nvlink, pci, net };
// How often collsim's own algorithms on GPUs launch a kernel (send_recv.hpp says why).
enum class SendRecvLaunch {
  per_step,        // collsim's collective alone, on send/recv: a launch per dependent step
  per_collective,  // standing in for NCCL's own collective: one kernel, one launch first
};

std::string_view algo_name(Algo algo);   // "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect", "CollNetChain"
std::string_view proto_name(Proto proto);  // "Simple", "LL", "LL128"
Algo parse_algo(std::string_view name, std::string_view field);
Proto parse_proto(std::string_view name, std::string_view field);
std::vector<Algo> all_algos();
std::vector<Proto> all_protos();
std::vector<std::string> algo_names();
std::vector<std::string> proto_names();

// collsim's allreduce that runs NCCL's algorithm ("nccl-ring", ...), and back (nullopt for
// an algorithm that is none of NCCL's).
std::string registry_name(Algo algo);
std::optional<Algo> algo_of(std::string_view registry_name);

// NCCL's CollNet algorithms (CollNetDirect, CollNetChain): the rails' switches reduce (SHARP).
bool is_collnet(Algo algo);
// Algorithms that reduce in a switch (NVLS, NVLSTree, CollNet*): they run Simple only.
bool reduces_in_switch(Algo algo);

// Per-collective base latency, us (baseLat[algo][proto]).
double base_latency_us(Algo algo, Proto proto);
// Per-hop latency, us (hwLat[hw][algo][proto]).
double hop_latency_us(Hw hw, Algo algo, Proto proto);

// GB/s per NVLink link and direction as NCCL's topology counts it (SMxx_NVLINK_BW).
double nvlink_link_bandwidth_gbs(GpuArch arch);

// The tuning tables' column: 1 node, 2 nodes, more (index2 = nNodes <= 2 ? nNodes-1 : 2).
int node_column(int nodes);
// LL's ceiling on bus bandwidth, GB/s (llMaxBws): by architecture on one node, by CPU vendor
// (AMD: the second row, else the first) on several.
double ll_max_bandwidth_gbs(GpuArch arch, CpuVendor cpu, int nodes);
// Per-channel ceilings on bus bandwidth, GB/s.
double ring_ll128_channel_max_gbs(GpuArch arch, int nodes);  // perChMaxRingLL128Bws
double tree_channel_max_gbs(GpuArch arch, int nodes);        // perChMaxTreeBws
double tree_ll128_channel_max_gbs(GpuArch arch, int nodes);  // perChMaxTreeLL128Bws
// NVLS's share of the NVLink bandwidth (nvlsEfficiency; newest source).
double nvls_efficiency(GpuArch arch);
// The CPU's cost of posting a network operation, us (getNetOverhead: Intel 1, AMD 2, else 1).
double net_overhead_us(CpuVendor cpu);

// The bus bandwidth factors of NCCL's model for (algo, proto) (ncclTopoTuneModel's
// refinements), applied to the graph's bandwidth: Ring LL x.5, LL128 x.92; Tree x.92, LL
// x1/3.8, LL128 x7/9 (one node) or x120/128; NVLS, NVLSTree x nvls_efficiency; CollNet x1
// (CollNetDirect's x.85 is its switch's: transport.cpp).
double protocol_efficiency(Algo algo, Proto proto, GpuArch arch, int nodes);

// The tree correction factor (treeCorrectionFactor[proto][log2(bytes/64)]), applied by NCCL's
// tuner to the tree's bandwidth for sizes from 64 B to 256 MiB.
double tree_correction(Proto proto, double bytes);

// Sizes, bytes.
constexpr int steps = 8;                            // NCCL_STEPS
constexpr int ll_lines_per_thread = 8;              // NCCL_LL_LINES_PER_THREAD
constexpr double simple_buffer = 4.0 * 1024 * 1024;  // DEFAULT_BUFFSIZE
constexpr double ll_buffer = 8.0 * 512 * 8 * 16;     // NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS x NCCL_STEPS x 16 B
constexpr double ll128_buffer = 120.0 * 640 * 8 * 8;  // NCCL_LL128_ELEMS_PER_THREAD x NCCL_LL128_MAX_NTHREADS x NCCL_STEPS x 8 B
// A chunk of payload a channel moves per step: Simple's step buffer x ALLREDUCE_CHUNKSTEPS;
// LL carries half of its line, LL128 120 of 128 bytes.
double chunk_bytes(Algo algo, Proto proto);
// The chunk NCCL's computeColl gives one channel of the tree (Simple, LL128) and of NVLS for an
// allreduce of `bytes` per rank on `channels` channels: chunk_bytes', shrunk while the bytes
// leave each channel too few chunks to fill the pipeline (docs/nccl.md gives the rules).
double pipeline_chunk_bytes(Algo algo, Proto proto, double bytes, int channels, int ranks, int nodes);
// Chunks one connection's FIFO holds: NCCL_STEPS slots, a chunk taking ALLREDUCE_CHUNKSTEPS
// of them on Ring/Simple (NCCL_STEPS / 2), one otherwise.
int fifo_chunks(Algo algo, Proto proto);

}  // namespace collsim::nccl
