// Megatron's 1F1B order of a stage's passes (src/parallel/pipeline_schedule.hpp), worked out by hand.
#include <doctest/doctest.h>

#include "parallel/pipeline_schedule.hpp"

using namespace collsim;

TEST_CASE("1F1B, Megatron's order for stage 1 of 4 with 5 micro-batches: 2 warm-up forwards, then one each, then the backwards") {
  using P = PipelinePass;
  CHECK(one_f_one_b(1, 4, 5) == std::vector<P>{{true, 0}, {true, 1}, {true, 2}, {false, 0}, {true, 3}, {false, 1},
                                               {true, 4}, {false, 2}, {false, 3}, {false, 4}});
  // the last stage alternates from the start; more warm-up than micro-batches is cut
  CHECK(one_f_one_b(3, 4, 2) == std::vector<P>{{true, 0}, {false, 0}, {true, 1}, {false, 1}});
  CHECK(one_f_one_b(0, 4, 2) == std::vector<P>{{true, 0}, {true, 1}, {false, 0}, {false, 1}});
  CHECK(one_f_one_b_bubble(4, 8) == doctest::Approx(3.0 / 11).scale(0));
}
