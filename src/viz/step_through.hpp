#pragma once
// The algorithm step by step, from a trace's full message list: at each step, which chunk
// each rank sends to whom, and what each rank then holds (how many ranks' contributions
// each of its chunks contains: partial, or final when all of them).
//
// Nothing is guessed: every message of a collsim-trace/2 says which elements of the
// vector it carried (`elements`). Their first and last elements cut the vector into
// chunks (p chunks for a ring, halves and quarters for recursive halving, segments for a
// pipeline, one for whole-vector algorithms). The holdings are replayed message by message
// (a receiver merges what the sender held of those chunks when the transfer started); the
// replay must end in the collective's result, or only the messages are shown (and why).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "viz/trace_view.hpp"

namespace collsim::viz {

struct StepMessage {
  int src = 0, dst = 0;
  double bytes = 0;
  std::vector<int> chunks;  // the chunks it carries (empty when the step-through has no chunk model)
  std::string label;        // "c3", "c0–3", "all", "the vector"
  int phase = 0;
};

struct StepFrame {
  std::string label;  // "reduce-scatter step 2", or "before the first step"
  int phase = -1;     // index into TraceView::phases; -1 for the first frame
  int step = 0;
  double start = 0, end = 0;
  std::vector<StepMessage> messages;
  std::vector<std::vector<int>> holds;  // [rank][chunk]: contributions held (0 .. ranks)
};

struct StepThrough {
  bool available = false;
  std::string why_not;           // when not available: why, in one sentence
  int ranks = 0, chunks = 0;
  bool chunk_model = false;      // holdings known (the replay reproduced the result)
  std::string model;             // "whole vector" (one chunk), "pieces" (chunks from the elements carried), or ""
  std::string note;              // which round and epoch, what the model is, or why holdings are missing
  int round = 0, epoch = 0;
  std::vector<StepFrame> frames;
};

constexpr int step_through_max_ranks = 16;
constexpr int step_through_max_chunks = 64;
constexpr size_t step_through_max_messages = 5000;

StepThrough derive_step_through(const TraceView& trace, int max_ranks = step_through_max_ranks);

// For the HTML report's script.
nlohmann::json step_through_json(const StepThrough& steps, const TraceView& trace);

}  // namespace collsim::viz
