#pragma once
// The algorithm step by step, derived from a trace's full message list: at each step,
// which chunk each rank sends to whom, and what each rank then holds (how many ranks'
// contributions each of its chunks contains: partial, or final when all of them).
//
// The trace says for each message its phase, step, sender, receiver and bytes, not which
// elements it carried. The chunks a message carries are inferred from the algorithm's shape:
//   - whole-vector messages (trees, flat, naive, recursive doubling): one chunk, the vector;
//   - pipelined chains: segment (step - distance of src from the root);
//   - otherwise the vector is cut into p chunks (chunk c is rank c's share) and each phase
//     gets the first rule that fits all its messages: ring steps (src - step + offset) mod p,
//     halving/doubling exchanges (a block or a stride of chunks at distance src xor dst),
//     tree scatters (the receiver's subtree), or all that the sender holds.
// The holdings are then replayed message by message (a receiver merges what the sender
// held when the transfer started), and the replay must end in the collective's result
// (allreduce: every rank holds every chunk, final); otherwise only the messages are shown.
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
  std::string model;             // "whole vector", "pipeline segments", or the rules found: "ring", "halving-doubling", ...
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
