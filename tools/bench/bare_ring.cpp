// The bare engine's ring allreduce, for tools/benchmark: what SimGrid alone costs for the
// messages collsim's ring sends, so that collsim's own overhead can be read as a ratio.
//
//   bare_ring PLATFORM.xml WORKERS BYTES
//
// Rank r runs on host-r of the platform, as collsim places ranks on a <cluster> of
// host-0..host-N. 2(p-1) steps; in each, every rank sends a chunk to its right and receives
// from its left, chunk (r - s) mod p in reduce-scatter step s and (r - s + 1) mod p in
// allgather step s, as collsim's ring does. A chunk's bytes are collsim's own: the even
// chunks of the logical float32 elements (BYTES / 4 of them), one element apart when p does
// not divide them, whatever collsim carries. No data, no reduction, no trace: the payload is
// a pointer. The SimGrid
// options are collsim's own (simgrid_options of an ideal-network scenario), so both
// programs run the same engine configuration. Prints the simulated time and the messages.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "algorithms/chunks.hpp"
#include "scenario/scenario.hpp"
#include "plan/payload.hpp"
#include "plan/engine_setup.hpp"

namespace sg4 = simgrid::s4u;
using collsim::Payload;

namespace {

int token = 0;

// One rank: send right, receive from the left, wait for the send; 2(p-1) times.
void ring_rank(sg4::Mailbox* to_right, sg4::Mailbox* from_left, int rank, const std::vector<uint64_t>& chunk_bytes) {
  const int p = static_cast<int>(chunk_bytes.size());
  for (int step = 0; step < 2 * (p - 1); ++step) {
    const int back = step < p - 1 ? step : step - (p - 1) - 1;  // allgather sends one chunk later
    const uint64_t bytes = chunk_bytes[static_cast<size_t>(((rank - back) % p + p) % p)];
    sg4::CommPtr sending = to_right->put_async(&token, bytes);
    from_left->get<int>();
    sending->wait();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bare_ring PLATFORM.xml WORKERS BYTES\n");
    return 2;
  }
  const std::string platform = argv[1];
  const int p = std::atoi(argv[2]);
  const double bytes = std::strtod(argv[3], nullptr);

  std::string program = "bare_ring", quiet = "--log=root.thresh:warning";
  char* engine_argv[] = {program.data(), quiet.data(), nullptr};
  int engine_argc = 2;
  sg4::Engine engine(&engine_argc, engine_argv);
  // A static default scenario: a temporary (or a local) here makes GCC 12 warn
  // (-Wmaybe-uninitialized, a false positive) about a string deep inside its inlined destructor.
  static const collsim::Scenario defaults{};
  for (const auto& [option, origin] : collsim::simgrid_options(defaults, {})) sg4::Engine::set_config(option);
  engine.load_platform(platform);

  // One receive mailbox per rank, looked up once.
  std::vector<sg4::Mailbox*> inbox(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) inbox[static_cast<size_t>(r)] = sg4::Mailbox::by_name("to-" + std::to_string(r));
  const Payload payload = collsim::plan_payload(bytes, collsim::Dtype::float32, p, std::nullopt);
  std::vector<uint64_t> chunk_bytes(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i)
    chunk_bytes[static_cast<size_t>(i)] =
        collsim::even_chunk(payload.logical_elems, p, i).count * collsim::dtype_size(collsim::Dtype::float32);
  const int steps = 2 * (p - 1);
  for (int r = 0; r < p; ++r) {
    sg4::Mailbox* right = inbox[static_cast<size_t>((r + 1) % p)];
    sg4::Mailbox* mine = inbox[static_cast<size_t>(r)];
    sg4::Actor::create("rank-" + std::to_string(r), engine.host_by_name("host-" + std::to_string(r)),
                       [right, mine, r, &chunk_bytes] { ring_rank(right, mine, r, chunk_bytes); });
  }
  engine.run();
  std::printf("%.17g %lld\n", sg4::Engine::get_clock(), static_cast<long long>(p) * steps);
  return 0;
}
