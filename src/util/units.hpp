#pragma once
// Unit strings people write in scenarios and on the command line:
// sizes "64MiB" "30MB" "1000", bandwidths "10Gbps" (bits) "10GBps" (bytes),
// times "1us" "20ms" "1.5s". Everything is returned in SI base units
// (bytes, bytes/s, seconds). Errors throw InputError naming `field`.
#include <cstdint>
#include <string>
#include <string_view>

namespace collsim {

// The range of every quantity collsim accepts (README "Limits"): 0, or from the smallest
// to the largest below. Values outside (1e308 bytes, a denormal 4.9e-324 s, a latency of
// years) are refused: they overflow the element arithmetic or stall the simulation.
struct QuantityRange {
  double smallest;  // the smallest value > 0
  double largest;
};
constexpr QuantityRange size_range{1, 1125899906842624.0};  // 1 byte to 1 PiB
constexpr QuantityRange time_range{1e-12, 1e6};             // 1 ps to 1e6 s (11.6 days)
constexpr QuantityRange bandwidth_range{1, 1e15};           // 1 B/s to 1 PB/s
constexpr QuantityRange flops_range{1, 1e18};               // 1 flop to 1 Ef

double parse_size(std::string_view text, std::string_view field);
double parse_bandwidth(std::string_view text, std::string_view field);
double parse_time(std::string_view text, std::string_view field);
// Amounts of computation, as in SimGrid platform files: "2Gf", "500Mf", "1e9f".
double parse_flops(std::string_view text, std::string_view field);

// Human-readable forms for tables: "64 MiB", "10 GB/s", "1.23 ms".
// `digits` significant digits ("8 MiB", "1.5 KiB"; whole bytes below 1 KiB: "640 B").
std::string format_size(double bytes, int digits = 4);
// `digits` significant digits, decimal prefixes: "9.98 GB/s".
std::string format_bandwidth(double bytes_per_second, int digits = 4);
std::string format_time(double seconds);

}  // namespace collsim
