#pragma once
// The last resort of the order search (recovery/order_search.hpp): searches of the orders place
// by place, with backtracking. Internal to the order search; pure as it is.
#include <vector>

#include "algorithms/partners.hpp"
#include "recovery/order_search.hpp"

namespace collsim {

// An order of `members` none of whose `pairs` crosses (search.crosses), or empty when none
// was found within search.max_tries: first places filled in a fixed order (the most paired
// first), whose orders stay close to the current one; then, when that gives up, the most
// constrained place first, with forward checking.
std::vector<int> order_by_places(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search);

}  // namespace collsim
