#include <doctest/doctest.h>

#include "util/errors.hpp"
#include "util/units.hpp"

using namespace collsim;

TEST_CASE("sizes: binary and decimal prefixes, plain numbers") {
  CHECK(parse_size("64MiB", "f") == 64.0 * 1024 * 1024);
  CHECK(parse_size("30MB", "f") == 30e6);
  CHECK(parse_size("4096", "f") == 4096);
  CHECK(parse_size("1GiB", "f") == 1073741824.0);
  CHECK(parse_size("1.5KiB", "f") == 1536);
}

TEST_CASE("bandwidths: lower-case b is bits, upper-case B is bytes") {
  CHECK(parse_bandwidth("10Gbps", "f") == 1.25e9);
  CHECK(parse_bandwidth("10GBps", "f") == 10e9);
  CHECK(parse_bandwidth("100Mbps", "f") == 12.5e6);
}

TEST_CASE("times") {
  CHECK(parse_time("1us", "f") == doctest::Approx(1e-6).scale(0));
  CHECK(parse_time("20ms", "f") == doctest::Approx(0.02).scale(0));
  CHECK(parse_time("2", "f") == 2);
  CHECK(parse_time("1ns", "f") == doctest::Approx(1e-9).scale(0));
}

TEST_CASE("amounts of computation") {
  CHECK(parse_flops("2Gf", "f") == 2e9);
  CHECK(parse_flops("500Mf", "f") == 5e8);
  CHECK_THROWS_AS(parse_flops("2G", "f"), InputError);
}

TEST_CASE("bad unit strings name the field and what is allowed") {
  CHECK_THROWS_WITH_AS(parse_size("64MIB", "collective.size"),
                       "collective.size: unknown unit 'MIB' in '64MIB' (allowed: B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_size("-5", "collective.size"), "collective.size: '-5' is negative; a size must be > 0",
                       InputError);
  CHECK_THROWS_AS(parse_size("lots", "f"), InputError);
  CHECK_THROWS_AS(parse_bandwidth("10", "f"), InputError);
  CHECK_THROWS_AS(parse_bandwidth("0Gbps", "f"), InputError);
  CHECK_THROWS_AS(parse_time("3 fortnights", "f"), InputError);
}

TEST_CASE("formatting for people") {
  CHECK(format_size(64.0 * 1024 * 1024) == "64 MiB");
  CHECK(format_size(100) == "100 B");
  CHECK(format_bandwidth(10e9) == "10 GB/s");
  CHECK(format_time(0.0126429) == "12.6429 ms");
  CHECK(format_time(2e-6) == "2 us");
}

TEST_CASE("quantities outside their range are refused, not overflowed or flushed to zero") {
  CHECK(parse_size("1125899906842624", "f") == 1125899906842624.0);  // 1 PiB
  CHECK_THROWS_AS(parse_size("1125899906842625", "f"), InputError);  // 1 PiB + 1 byte
  CHECK_THROWS_AS(parse_size("18446744073709555712", "f"), InputError);
  CHECK_THROWS_AS(parse_size("1e308", "f"), InputError);
  CHECK_THROWS_AS(parse_size("4.9e-324", "f"), InputError);
  CHECK_THROWS_AS(parse_size("0.5", "f"), InputError);
  CHECK(parse_size("0", "f") == 0);
  CHECK(parse_time("0", "f") == 0);
  CHECK(parse_time("1e6", "f") == 1e6);
  CHECK_THROWS_AS(parse_time("20000min", "f"), InputError);  // 1.2e6 s
  CHECK_THROWS_AS(parse_time("1e-13", "f"), InputError);
  CHECK_THROWS_AS(parse_bandwidth("1e-320Bps", "f"), InputError);
  CHECK_THROWS_AS(parse_bandwidth("2000TBps", "f"), InputError);  // 2e15 B/s
  CHECK_THROWS_AS(parse_bandwidth("nanGBps", "f"), InputError);
  CHECK_THROWS_AS(parse_flops("1e300f", "f"), InputError);
}
