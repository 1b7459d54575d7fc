#pragma once
// Element-wise reductions: sum, prod, min, max, avg (avg = sum, then divide by the
// group size once at the end, as NCCL's ncclAvg does).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/buffer.hpp"

namespace collsim {

enum class OpKind { sum, prod, min, max, avg };

std::string_view op_name(OpKind op);
OpKind parse_op(std::string_view name, std::string_view field);
std::vector<std::string> op_names();

class ReduceOp {
public:
  ReduceOp(OpKind kind, Dtype dtype) : kind_(kind), dtype_(dtype) {}

  OpKind kind() const { return kind_; }
  Dtype dtype() const { return dtype_; }

  // into[i] = into[i] (op) from[i]; both views hold the same number of elements. Then the
  // rank that combined pays the reduction's cost, if one is set.
  void combine(View into, View from) const;
  // What combining `elements` logical elements costs the rank that does it (the simulation
  // makes it time: collective.reduce_bandwidth). Called in that rank's actor. Unset: free.
  void set_cost(std::function<void(size_t elements)> cost) { cost_ = std::move(cost); }
  // Pays that cost for `elements` combined some other way (a server applying an update).
  void charge(size_t elements) const {
    if (cost_ && elements > 0) cost_(elements);
  }
  // What happens once after the reduction completes (avg divides by the group size).
  void finalize(View data, int group_size) const;

private:
  OpKind kind_;
  Dtype dtype_;
  std::function<void(size_t)> cost_;
};

}  // namespace collsim
