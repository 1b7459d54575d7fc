#include "platform/gpu_catalogue.hpp"

#include "util/named_enum.hpp"

namespace collsim {

// GPUs. NVIDIA quotes NVLink as the bidirectional total per GPU; a link carries half of its
// share each way.
const std::vector<GpuModel>& gpu_models() {
  static const std::vector<GpuModel> models{
      // "Each A100 GPU has 12 NVLink ports ... full NVLink bi-directional speed of 600 GB/s"
      // (NVIDIA, Introducing HGX A100, devblogs.nvidia.com); the 2nd-generation NVSwitch has
      // no in-switch reduction.
      {"a100", GpuArch::ampere, 12, 25e9, false, "A100: NVLink 3, 12 links, 600 GB/s per GPU both ways"},
      // "900 gigabytes per second (GB/s) bidirectional per GPU" (NVIDIA Hopper architecture
      // page), 18 NVLink 4 links; the 3rd-generation NVSwitch "incorporates hardware
      // acceleration for collective operations with multicast and NVIDIA SHARP in-network
      // reductions" (NVIDIA developer blog, third-generation NVSwitch).
      {"h100", GpuArch::hopper, 18, 25e9, true, "H100: NVLink 4, 18 links, 900 GB/s per GPU both ways, NVLink SHARP"},
      // The same GH100 NVLink and HGX board as H100 (NVIDIA DGX BasePOD reference architecture:
      // "DGX H200 and H100 system", eight Hopper GPUs, four NVSwitch chips).
      {"h200", GpuArch::hopper, 18, 25e9, true, "H200: NVLink 4, 18 links, 900 GB/s per GPU both ways, NVLink SHARP"},
      // "up to 18 NVLink 100 gigabyte-per-second (GB/s) connections for a total bandwidth of
      // 1.8 terabytes per second" (NVIDIA NVLink page, Blackwell); NVLink Switch with SHARP.
      {"b200", GpuArch::blackwell, 18, 50e9, true, "B200: NVLink 5, 18 links, 1.8 TB/s per GPU both ways, NVLink SHARP"},
  };
  return models;
}

// NICs. InfiniBand 4x links carry 400 (NDR) or 200 (HDR) Gb/s of data after 64b/66b
// encoding (IBTA rates: lane signalling 106.25 / 53.125 Gb/s, lane effective 100 / 50).
// Packet framing, from the standards:
// - InfiniBand (IBTA Architecture Specification Vol. 1: LRH 8 B, BTH 12 B, ICRC 4 B
//   (7.8.1), VCRC 2 B (7.8.2)): 26 bytes per packet of up to 4096 bytes;
// - RoCE v2 (IBTA Annex A17 over IEEE 802.3 Ethernet): preamble and start 8 B, Ethernet
//   header 14 B, IPv4 20 B, UDP 8 B, BTH 12 B, ICRC 4 B, FCS 4 B, inter-frame gap 12 B: 82
//   bytes per packet of up to 4096 bytes;
// - EFA (AWS SRD over Ethernet, jumbo frames of 9001 bytes: Amazon EC2 user guide, network
//   MTU): the Ethernet framing, 38 bytes (SRD's own header is not published).
const std::vector<NicModel>& nic_models() {
  static const std::vector<NicModel> models{
      // ConnectX-7: "Single-port OSFP: NDR 400Gb/s and 400GbE; NDR200 200Gb/s and 200GbE"
      {"ndr", Fabric::infiniband, 400e9 / 8, 4096, 26, false, "ConnectX-7, InfiniBand NDR 400 Gb/s"},
      {"ndr-sharp", Fabric::infiniband, 400e9 / 8, 4096, 26, true,
       "ConnectX-7, InfiniBand NDR 400 Gb/s, switches with SHARP (in-network reduction)"},
      {"ndr200", Fabric::infiniband, 200e9 / 8, 4096, 26, false, "ConnectX-7, InfiniBand NDR200 200 Gb/s"},
      // ConnectX-6: "up to two ports of 200Gb/s for InfiniBand and Ethernet"
      {"hdr", Fabric::infiniband, 200e9 / 8, 4096, 26, false, "ConnectX-6, InfiniBand HDR 200 Gb/s"},
      {"hdr-sharp", Fabric::infiniband, 200e9 / 8, 4096, 26, true,
       "ConnectX-6, InfiniBand HDR 200 Gb/s, switches with SHARP (in-network reduction)"},
      {"roce400", Fabric::roce, 400e9 / 8, 4096, 82, false, "ConnectX-7, 400 GbE RoCE v2"},
      {"roce200", Fabric::roce, 200e9 / 8, 4096, 82, false, "ConnectX-7 or -6, 200 GbE RoCE v2"},
      // EFA: "400 Gbps Elastic Fabric Adapter (EFA)" per p4d instance (4 x 100 Gb/s), "up to
      // 32 network cards ... 3,200 Gbps" per p5 (4 x 100 Gb/s per GPU) (AWS)
      {"efa100", Fabric::efa, 100e9 / 8, 9001, 38, false, "AWS EFA, 100 Gb/s"},
      {"efa400", Fabric::efa, 400e9 / 8, 9001, 38, false, "AWS EFA, 4 x 100 Gb/s per GPU (p5)"},
  };
  return models;
}

const std::vector<NodeModel>& node_models() {
  static const std::vector<NodeModel> models{
      // DGX A100: 8 A100, 6 NVSwitch, one 200 Gb/s HDR NIC per GPU, 2 AMD EPYC 7742.
      {"dgx-a100", "a100", 8, "hdr", CpuVendor::amd, "8 A100, NVLink 3 (300 GB/s per GPU each way), 8 x 200 Gb/s HDR"},
      // DGX H100 / H200: "Eight NVIDIA Hopper GPUs", "Four NVIDIA NVSwitch chips", "Dual Intel
      // Xeon Platinum 8480C", "eight single-port NVIDIA ConnectX-7 VPI ... up to 400 Gb/s"
      // (NVIDIA DGX BasePOD reference architecture, core components); GPU j on ConnectX j
      // (DGX H100 user guide, network modules).
      {"dgx-h100", "h100", 8, "ndr", CpuVendor::intel, "8 H100, NVLink 4 (450 GB/s per GPU each way), 8 x 400 Gb/s NDR"},
      {"dgx-h200", "h200", 8, "ndr", CpuVendor::intel, "8 H200, NVLink 4 (450 GB/s per GPU each way), 8 x 400 Gb/s NDR"},
      // GB200 NVL72: "36 Grace CPUs and 72 Blackwell GPUs" in one NVLink domain, "130TB/s of
      // GPU bandwidth in one NVL72"; a ConnectX-7 400 Gb/s per GPU ("4x 400 GB/s NVIDIA
      // Quantum-2 CX7 InfiniBand connections" per 4-GPU tray, Azure ND GB200 v6).
      {"gb200-nvl72", "b200", 72, "ndr", CpuVendor::arm,
       "72 B200 in one NVLink domain (900 GB/s per GPU each way), 72 x 400 Gb/s NDR"},
  };
  return models;
}

namespace {
template <typename Model>
const Model* find_by_name(const std::vector<Model>& models, std::string_view name) {
  for (const Model& model : models)
    if (model.name == name) return &model;
  return nullptr;
}

template <typename Model>
std::vector<std::string> names_of(const std::vector<Model>& models) {
  std::vector<std::string> names;
  for (const Model& model : models) names.push_back(model.name);
  return names;
}

const NamedEnum<CpuVendor>& cpu_vendors() {
  static const NamedEnum<CpuVendor> table{"CPU vendor", {{CpuVendor::intel, "intel"}, {CpuVendor::amd, "amd"}, {CpuVendor::arm, "arm"}}};
  return table;
}
}  // namespace

const GpuModel* find_gpu_model(std::string_view name) { return find_by_name(gpu_models(), name); }
const NicModel* find_nic_model(std::string_view name) { return find_by_name(nic_models(), name); }
const NodeModel* find_node_model(std::string_view name) { return find_by_name(node_models(), name); }
std::vector<std::string> gpu_model_names() { return names_of(gpu_models()); }
std::vector<std::string> nic_model_names() { return names_of(nic_models()); }

std::string_view cpu_vendor_name(CpuVendor vendor) { return cpu_vendors().name(vendor); }
CpuVendor parse_cpu_vendor(std::string_view name, std::string_view field) { return cpu_vendors().parse(name, field); }

std::string_view fabric_name(Fabric fabric) {
  static const NamedEnum<Fabric> table{"fabric", {{Fabric::infiniband, "InfiniBand"}, {Fabric::roce, "RoCE v2"}, {Fabric::efa, "EFA"}}};
  return table.name(fabric);
}

}  // namespace collsim
