#pragma once
// Unit strings people write in scenarios and on the command line:
// sizes "64MiB" "30MB" "1000", bandwidths "10Gbps" (bits) "10GBps" (bytes),
// times "1us" "20ms" "1.5s". Everything is returned in SI base units
// (bytes, bytes/s, seconds). Errors throw InputError naming `field`.
#include <cstdint>
#include <string>
#include <string_view>

namespace collsim {

double parse_size(std::string_view text, std::string_view field);
double parse_bandwidth(std::string_view text, std::string_view field);
double parse_time(std::string_view text, std::string_view field);
// Amounts of computation, as in SimGrid platform files: "2Gf", "500Mf", "1e9f".
double parse_flops(std::string_view text, std::string_view field);

// Human-readable forms for tables: "64 MiB", "10 GB/s", "1.23 ms".
std::string format_size(double bytes);
std::string format_bandwidth(double bytes_per_second);
std::string format_time(double seconds);

}  // namespace collsim
