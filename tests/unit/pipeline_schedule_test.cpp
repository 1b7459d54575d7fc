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

TEST_CASE("interleaved 1F1B, Megatron's order for 2 stages, 2 chunks and 4 micro-batches, worked out by hand") {
  using P = PipelinePass;
  // forward k: chunk (k mod 4) / 2, micro-batch (k / 4) x 2 + k mod 2; backward the chunks reversed.
  // Stage 0 warms up with (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 forwards, stage 1 with 2.
  CHECK(interleaved_one_f_one_b(0, 2, 2, 4) ==
        std::vector<P>{{true, 0, 0}, {true, 1, 0}, {true, 0, 1}, {true, 1, 1},                 // warm-up
                       {true, 2, 0}, {false, 0, 1}, {true, 3, 0}, {false, 1, 1},               // one forward, one backward
                       {true, 2, 1}, {false, 0, 0}, {true, 3, 1}, {false, 1, 0},
                       {false, 2, 1}, {false, 3, 1}, {false, 2, 0}, {false, 3, 0}});           // cool-down
  CHECK(interleaved_one_f_one_b(1, 2, 2, 4) ==
        std::vector<P>{{true, 0, 0}, {true, 1, 0},
                       {true, 0, 1}, {false, 0, 1}, {true, 1, 1}, {false, 1, 1}, {true, 2, 0}, {false, 0, 0},
                       {true, 3, 0}, {false, 1, 0}, {true, 2, 1}, {false, 2, 1}, {true, 3, 1}, {false, 3, 1},
                       {false, 2, 0}, {false, 3, 0}});
  // m = P: every forward first (Megatron's all-warm-up case); one chunk is plain 1F1B
  const auto all_warm = interleaved_one_f_one_b(1, 2, 2, 2);
  CHECK(all_warm == std::vector<P>{{true, 0, 0}, {true, 1, 0}, {true, 0, 1}, {true, 1, 1},
                                   {false, 0, 1}, {false, 1, 1}, {false, 0, 0}, {false, 1, 0}});
  CHECK(interleaved_one_f_one_b(1, 4, 1, 5) == one_f_one_b(1, 4, 5));
  // the bubble: (P - 1) / (v m) of the ideal, so (P - 1) / (v m + P - 1) of the step
  CHECK(one_f_one_b_bubble(4, 8, 2) == doctest::Approx(3.0 / 19).scale(0));
}
