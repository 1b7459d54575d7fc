#pragma once
// Which ranks talk to which in each algorithm: the pairs whose routes the cost model reads
// its alpha and B from (the worst of them). Written from the algorithms' own schedules,
// so that on a platform whose routes differ (a torus, a fat tree, two racks) each formula
// is paid at the routes the algorithm really uses.
#include <utility>
#include <vector>

namespace collsim {

using RankPairs = std::vector<std::pair<int, int>>;
// p ranks, the root of rooted algorithms, the servers of the parameter server.
using PartnersFn = RankPairs (*)(int p, int root, int servers);

RankPairs ring_partners(int p, int root, int servers);           // r and r+1 (mod p)
RankPairs root_partners(int p, int root, int servers);           // the root and every rank
RankPairs chain_partners(int p, int root, int servers);          // root+i and root+i+1
RankPairs binomial_partners(int p, int root, int servers);       // parent: relative rank minus its lowest bit
RankPairs butterfly_partners(int p, int root, int servers);      // fold pairs, then new ranks v and v^2^k
RankPairs binary_tree_partners(int p, int root, int servers);    // schedule_binary_tree(p, root)
RankPairs double_tree_partners(int p, int root, int servers);    // both trees of double_binary_tree
RankPairs all_partners(int p, int root, int servers);            // every pair
RankPairs server_partners(int p, int root, int servers);         // servers 0..S-1 and every rank
RankPairs scatter_ring_partners(int p, int root, int servers);   // binomial from the root, then the ring
RankPairs ring_and_root_partners(int p, int root, int servers);  // the ring and the root with everyone

}  // namespace collsim
