#pragma once
// The GPU hardware collsim knows by name: GPUs (their NVLink), NICs (their fabric and its
// framing) and the nodes that combine them (DGX A100, H100, H200, a GB200 NVL72 rack).
// Every figure comes from a datasheet or a standard, cited in gpu_catalogue.cpp and in
// docs/topologies.md (GPU hardware). The rail generators (generator_spec.hpp) build nodes
// from these; NCCL's transport (src/nccl/) reads what a host is from the properties the
// generators set (gpu, nic, cpu, node, rail).
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

// NCCL's compute-capability classes (its tuning tables have one row per class).
enum class GpuArch { ampere, hopper, blackwell };

struct GpuModel {
  std::string name;              // "h100"
  GpuArch arch = GpuArch::hopper;
  int nvlink_links = 0;          // NVLink links per GPU
  double nvlink_link_bandwidth = 0;  // bytes/s per link and direction (the datasheet's total / links / 2)
  bool nvlink_sharp = false;     // its NVSwitch reduces in the switch (NVLink SHARP: NCCL's NVLS)
  std::string summary;           // one line, with the datasheet's figure
  double nvlink_bandwidth() const { return nvlink_links * nvlink_link_bandwidth; }  // per direction
};

enum class Fabric { infiniband, roce, efa };

struct NicModel {
  std::string name;      // "ndr"
  Fabric fabric = Fabric::infiniband;
  double line_rate = 0;  // bytes/s of data per direction (after the line's 64b/66b encoding)
  // One packet on the wire: `mtu` bytes of payload and `framing` bytes of headers, CRCs and
  // (Ethernet) preamble and gap: the share of the line that carries data is mtu / (mtu + framing).
  int mtu = 4096;
  int framing = 0;
  bool sharp = false;    // its switches reduce (InfiniBand SHARP): NCCL's CollNet
  std::string summary;
  double payload_efficiency() const { return static_cast<double>(mtu) / (mtu + framing); }
};

enum class CpuVendor { intel, amd, arm };

// A GPU server (or an NVLink domain): its GPUs, one NIC per GPU, its CPUs.
struct NodeModel {
  std::string name;      // "dgx-h100"
  std::string gpu;       // a GpuModel name
  int gpus = 8;          // per node (per NVLink domain)
  std::string nic;       // the default NicModel name
  CpuVendor cpu = CpuVendor::intel;
  std::string summary;
};

const std::vector<GpuModel>& gpu_models();
const std::vector<NicModel>& nic_models();
const std::vector<NodeModel>& node_models();

// By name; nullptr when there is none.
const GpuModel* find_gpu_model(std::string_view name);
const NicModel* find_nic_model(std::string_view name);
const NodeModel* find_node_model(std::string_view name);

std::string_view cpu_vendor_name(CpuVendor vendor);
CpuVendor parse_cpu_vendor(std::string_view name, std::string_view field);
std::string_view fabric_name(Fabric fabric);

// The names, in the catalogue's order (for errors and --help).
std::vector<std::string> gpu_model_names();
std::vector<std::string> nic_model_names();

}  // namespace collsim
