#pragma once
// Generator strings ("torus:4x4:10GBps:1us", "nodes:4:8") parsed into plain descriptions.
// No SimGrid here: scenarios are checked before any engine exists, and the unit tests
// exercise the parsers directly. src/platform/generators.cpp builds them with s4u.
// docs/topologies.md describes each family with its diagram and route costs.
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace collsim {

// Every generated link is split-duplex (full duplex): its UP and DOWN halves each carry
// the full bandwidth.
struct LinkSpec {
  double bandwidth = 10e9;  // bytes/s
  double latency = 1e-6;    // seconds
};

// star:P[:BW[:LAT]]: P hosts, each with a private link to one switch.
struct StarSpec {
  int hosts = 0;
  LinkSpec link;
};

// rack:P:SLOW:SLOW_BW[:BW[:LAT]]: star:P[:BW[:LAT]] whose host SLOW has a SLOW_BW link.
struct RackSpec {
  int hosts = 0;
  int slow_host = 0;
  double slow_bandwidth = 0;
  LinkSpec link;
};

// fat-tree:LEVELS:DOWN:UP:COUNT[:BW[:LAT]]: SimGrid's FAT_TREE cluster (s4u::FatTreeParams);
// DOWN, UP and COUNT hold one value per level, from the hosts upwards.
struct FatTreeSpec {
  unsigned levels = 0;
  std::vector<unsigned> down, up, count;
  LinkSpec link;
};

// torus:XxY[xZ][:BW[:LAT]]: SimGrid's TORUS cluster, one host per torus node.
struct TorusSpec {
  std::vector<unsigned long> dimensions;
  LinkSpec link;
};

// dragonfly:G[,GL]:R[,RL]:N[:BW[:LAT]]: SimGrid's DRAGONFLY cluster with one chassis per
// group: G groups of R all-to-all connected routers with N hosts each.
struct DragonflySpec {
  unsigned groups = 0, global_links = 1;   // G groups; GL parallel links between two groups
  unsigned routers = 0, local_links = 1;   // R routers per group; RL parallel links between two
  unsigned nodes = 0;                      // N hosts per router
  LinkSpec link;
};

// nodes:N:G[:INTRA_BW[:NIC_BW[:INTRA_LAT[:NIC_LAT]]]]: N nodes (one netzone each) of G
// devices on fast intra-node links, each node with one NIC link to a top-level switch.
struct NodesSpec {
  int nodes = 0;
  int devices = 0;
  LinkSpec intra{100e9, 0.5e-6};
  LinkSpec nic{12.5e9, 2e-6};
};

// rail:N:G[:NVLINK_BW[:NIC_BW[:NVLINK_LAT[:NIC_LAT[:OVERSUB]]]]]: N nodes of G GPUs built as
// GPU clusters are (DGX SuperPOD): each GPU has its own NVLink port to its node's NVSwitch
// and its own NIC to rail switch j (GPU index j of every node); the G rail switches meet at
// a non-blocking spine, each through one uplink of N x NIC_BW / OVERSUB (latency NIC_LAT).
// NVLINK_BW may name a GPU (gpu_catalogue.hpp: its NVLink), NIC_BW a NIC. The defaults are
// a DGX H100's; dgx-a100, dgx-h100, dgx-h200:N[:OVERSUB][:NIC] and gb200-nvl72:R[:OVERSUB][:NIC]
// are presets (gpu_catalogue.hpp's nodes).
struct RailSpec {
  int nodes = 0;
  int gpus = 0;
  LinkSpec nvlink{450e9, 0.5e-6};  // NVLink 4: 900 GB/s per GPU, both directions together
  LinkSpec nic{50e9, 2e-6};        // ConnectX-7, 400 Gbit/s
  double oversubscription = 1;
  std::string gpu = "h100";        // what the GPUs are (host property gpu): NCCL's constants follow it
  std::string nic_model = "ndr";   // what the NICs are (host property nic)
  std::string cpu = "intel";       // the nodes' CPU vendor (host property cpu)
  // NCCL's PXN (src/nccl/): a GPU's send to another node's GPU on another rail crosses
  // NVLink to its own node's GPU on the destination's rail and leaves through that GPU's
  // NIC, instead of climbing its own rail to the spine. Set by the run, not the string.
  bool pxn = false;
  LinkSpec uplink() const { return {nodes * nic.bandwidth / oversubscription, nic.latency}; }
};

// leaf-spine:L:H[:BW[:LAT[:OVERSUB]]]: L leaf switches (a zone each) of H hosts with one
// link each (a CPU cluster's NIC), each leaf joined to a non-blocking spine by one uplink
// of H x BW / OVERSUB (latency LAT).
struct LeafSpineSpec {
  int leaves = 0;
  int hosts = 0;
  LinkSpec link;
  double oversubscription = 1;
  LinkSpec uplink() const { return {hosts * link.bandwidth / oversubscription, link.latency}; }
};

using GeneratorSpec =
    std::variant<StarSpec, RackSpec, FatTreeSpec, TorusSpec, DragonflySpec, NodesSpec, RailSpec, LeafSpineSpec>;

// Every host the generator builds is a GPU (host property gpu): the rail family and its
// presets (dgx-*, gb200-nvl72).
inline bool gpus_only(const GeneratorSpec& spec) { return std::holds_alternative<RailSpec>(spec); }

// What `collsim list topologies`, --help, error messages and docs say about a family.
struct GeneratorFamily {
  std::string name;                   // "torus"
  std::string syntax;                 // "torus:XxY[xZ][:BW[:LAT]]"
  std::vector<std::string> examples;  // instances listed with their counts; the first is quoted in errors
  std::string summary;                // one line
};
const std::vector<GeneratorFamily>& generator_families();

// Parses a generator string, throwing InputError naming `field` (with the family's syntax
// and an example) when it is malformed; nullopt if `topology` names no generator (a file).
std::optional<GeneratorSpec> parse_generator(const std::string& topology, const std::string& field);

}  // namespace collsim
