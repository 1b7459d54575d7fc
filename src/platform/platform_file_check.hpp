#pragma once
// A SimGrid platform file checked before SimGrid reads it. SimGrid 3.32 crashes or stops
// with "The Impossible Did Happen" on some platforms (no host at all, a routed zone with
// hosts but no link, a zero or NaN bandwidth, zones nested a thousand deep); this scan of
// the XML finds them first and says what is wrong and where (the line), so that the user
// never meets a SimGrid backtrace. It also counts the hosts, radicals of clusters
// included, so that a platform too large to build is refused before it is built.
#include <string>

namespace collsim {

// Zones nested deeper than this are refused (SimGrid recurses over the zone tree).
constexpr int max_zone_depth = 32;

struct PlatformFileFacts {
  long long hosts = 0;  // <host> elements plus the radicals of <cluster> and <cabinet>
};

// Throws InputError "topology: 'F' line N: ..." for what SimGrid would not survive.
PlatformFileFacts check_platform_file(const std::string& path);

}  // namespace collsim
