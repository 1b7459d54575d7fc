#pragma once
// A host as the planner reads it besides its routes: its name and properties (gpu, nic, cpu,
// node, rail; a switch's role and what it serves), from SimGrid's platform or from the
// generator's structure (model/generated_network.hpp) alike. NCCL's algorithms read them.
#include <string>
#include <utility>
#include <vector>

namespace collsim {

using HostProperties = std::vector<std::pair<std::string, std::string>>;

// The value of `key` in `properties` (empty: none).
inline std::string property_of(const HostProperties& properties, const std::string& key) {
  for (const auto& [name, value] : properties)
    if (name == key) return value;
  return "";
}

struct PlatformHost {
  std::string name;
  HostProperties properties;
  int index = -1;  // its place in the list it came in (the ranks' hosts, the platform's switches)
  std::string property(const std::string& key) const { return property_of(properties, key); }
};

}  // namespace collsim
