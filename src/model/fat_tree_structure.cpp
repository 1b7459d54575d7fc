#include "model/fat_tree_structure.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <vector>

#include "model/generated_network.hpp"

namespace collsim {
namespace {

// Nodes are numbered level after level (level 0: the hosts), by position within their
// level. SimGrid's ids: a host's is its position; the switches count down from 2N - 1 in
// the order they are made (level after level). Link u (SimGrid's uniqueId, in the order
// connect_node_to_parents makes them) is split-duplex: index 2u is its UP half, 2u + 1 DOWN.
class FatTreeStructure final : public GeneratedStructure {
public:
  explicit FatTreeStructure(const FatTreeSpec& tree) : tree_(tree), levels_(tree.levels) {
    count_.assign(levels_ + 1, 1);
    for (unsigned j = 0; j < levels_; ++j) count_[0] *= tree.down[j];
    for (unsigned i = 0; i < levels_; ++i) {
      size_t n = 1;
      for (unsigned j = 0; j <= i; ++j) n *= tree.up[j];
      for (unsigned j = i + 1; j < levels_; ++j) n *= tree.down[j];
      count_[i + 1] = n;
    }
    first_.assign(levels_ + 2, 0);
    for (unsigned l = 0; l <= levels_; ++l) first_[l + 1] = first_[l] + count_[l];
    connect();
  }

  void route(int from, int to, std::vector<int>& links, double& latency) const override;
  NetworkLink link(int index) const override {
    const auto u = static_cast<size_t>(index / 2);
    const std::string name = fmt::format("link_from_{}_{}_{}{}", simgrid_id(child_[u]), simgrid_id(parent_[u]), u,
                                         index % 2 == 0 ? "_UP" : "_DOWN");
    return {name, tree_.link.bandwidth, true, tree_.link.latency, false};
  }
  size_t hosts() const override { return count_[0]; }
  size_t links() const override { return 2 * child_.size(); }
  std::string zone(int) const override { return "fat-tree"; }

private:
  unsigned level_of(size_t node) const {
    unsigned l = 0;
    while (node >= first_[l + 1]) ++l;
    return l;
  }
  size_t position(size_t node) const { return node - first_[level_of(node)]; }
  // (negative beyond 2N switches, as SimGrid numbers them)
  long long simgrid_id(size_t node) const {
    const auto n = static_cast<long long>(count_[0]), i = static_cast<long long>(node);
    return i < n ? i : 2 * n - 1 - (i - n);
  }
  // Digit j of the label of the node at `level`, `position`: digits below the level count
  // the parents (up), the others the children (down), the first digit fastest.
  unsigned digit(unsigned level, size_t pos, unsigned j) const {
    for (unsigned m = 0; m < j; ++m) pos /= radix(level, m);
    return static_cast<unsigned>(pos % radix(level, j));
  }
  unsigned radix(unsigned level, unsigned j) const { return j < level ? tree_.up[j] : tree_.down[j]; }
  size_t parent_ports(unsigned level) const { return static_cast<size_t>(tree_.up[level]) * tree_.count[level]; }
  size_t child_ports(unsigned level) const {
    return level == 0 ? 0 : static_cast<size_t>(tree_.down[level - 1]) * tree_.count[level - 1];
  }
  bool in_sub_tree(size_t node, size_t host) const;
  void connect();

  FatTreeSpec tree_;
  unsigned levels_;
  std::vector<size_t> count_, first_;      // nodes by level; the first node of each level
  std::vector<size_t> child_, parent_;     // by link: its lower and upper node
  std::vector<int> up_links_, down_links_; // by node and port: the link (parents, children)
  std::vector<size_t> up_first_, down_first_;
};

// Every node of levels 0 to L-1, in order, to each of its parents in order (the parents
// whose labels equal its own but at its level's digit), with count[l] links each.
void FatTreeStructure::connect() {
  const size_t nodes = first_[levels_ + 1];
  up_first_.assign(nodes + 1, 0);
  down_first_.assign(nodes + 1, 0);
  for (size_t node = 0; node < nodes; ++node) {
    const unsigned l = level_of(node);
    up_first_[node + 1] = up_first_[node] + (l < levels_ ? parent_ports(l) : 0);
    down_first_[node + 1] = down_first_[node] + child_ports(l);
  }
  up_links_.assign(up_first_[nodes], -1);
  down_links_.assign(down_first_[nodes], -1);
  for (unsigned l = 0; l < levels_; ++l)
    for (size_t pos = 0; pos < count_[l]; ++pos) {
      // the parent with digit l = k: the child's label read with level l + 1's radices
      size_t base = 0, weight = 1, weight_l = 0;
      for (unsigned j = 0; j < levels_; ++j) {
        if (j == l) weight_l = weight;
        else base += weight * digit(l, pos, j);
        weight *= radix(l + 1, j);
      }
      const unsigned own = digit(l, pos, l);
      for (unsigned k = 0; k < tree_.up[l]; ++k) {
        const size_t parent = first_[l + 1] + base + k * weight_l;
        for (unsigned j = 0; j < tree_.count[l]; ++j) {
          const auto u = static_cast<int>(child_.size());
          child_.push_back(first_[l] + pos);
          parent_.push_back(parent);
          down_links_[down_first_[parent] + own + j * tree_.down[l]] = u;
          up_links_[up_first_[first_[l] + pos] + k + j * tree_.up[l]] = u;
        }
      }
    }
}

bool FatTreeStructure::in_sub_tree(size_t node, size_t host) const {
  const unsigned l = level_of(node);
  if (l == 0) return false;
  for (unsigned i = l; i < levels_; ++i)
    if (digit(l, position(node), i) != digit(0, host, i)) return false;
  return true;
}

void FatTreeStructure::route(int from, int to, std::vector<int>& links, double& latency) const {
  const auto source = static_cast<size_t>(from), destination = static_cast<size_t>(to);
  size_t current = source;
  while (!in_sub_tree(current, destination)) {  // up: d-mod-k
    const unsigned l = level_of(current);
    size_t d = destination;
    for (unsigned i = 0; i < l; ++i) d /= tree_.up[i];  // (3.32 divides by the parents only, not their ports)
    const int u = up_links_[up_first_[current] + d % parent_ports(l)];
    links.push_back(2 * u);
    latency += tree_.link.latency;
    current = parent_[static_cast<size_t>(u)];
  }
  while (current != destination) {  // down, as SimGrid walks it (the index runs on after each hop)
    const unsigned start_level = level_of(current);
    const size_t d = source % tree_.count[start_level - 1];
    // SimGrid tries every port i from d x down on and takes those whose i mod down is the
    // destination's digit: the next such i is found at once instead of port by port
    for (size_t i = d * tree_.down[start_level - 1];; ++i) {
      const unsigned l = level_of(current);
      const size_t ports = child_ports(l);  // 0 at a host: the walk is over
      if (i >= ports) break;
      const size_t radix = tree_.down[l - 1], wanted = digit(0, destination, l - 1);
      i += (wanted + radix - i % radix) % radix;
      if (i >= ports) break;
      const int u = down_links_[down_first_[current] + i];
      if (u < 0) throw std::logic_error("fat tree: a switch port without a link");
      links.push_back(2 * u + 1);
      latency += tree_.link.latency;
      current = child_[static_cast<size_t>(u)];
    }
  }
}

}  // namespace

std::shared_ptr<const GeneratedStructure> fat_tree_structure(const FatTreeSpec& tree) {
  return std::make_shared<FatTreeStructure>(tree);
}

}  // namespace collsim
