#include "report/nccl_variants.hpp"

#include <fmt/format.h>
#include <vector>

#include "nccl/constants.hpp"
#include "run/nccl_auto.hpp"
#include "util/units.hpp"

namespace collsim {

std::string rank_nccl_variants(const Scenario& scenario) {
  // priced for `collsim model`: nothing runs, the model's own limits
  const std::vector<NcclVariant> variants = price_nccl_variants(scenario, true);
  if (variants.empty()) return "";
  std::string out = "  NCCL's algorithms (collsim's runs of them, with the channels NCCL's tuner gives each), ranked by the model:\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const NcclVariant& v = variants[i];
    const std::string name = fmt::format("{}/{}", nccl::algo_name(v.algo), nccl::proto_name(v.proto));
    if (v.why_not.empty())
      out += fmt::format("  {:>2} {:<20} {:<19} {:>2} ch  {}\n", i + 1, name, nccl::registry_name(v.algo), v.channels,
                         format_time(v.time));
    else
      out += fmt::format("  {:>2} {:<20} {:<19} not here: {}\n", i + 1, name, nccl::registry_name(v.algo), v.why_not);
  }
  return out;
}

}  // namespace collsim
