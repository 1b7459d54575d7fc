#pragma once
// The trace's single messages (docs/trace-format.md#messages, #message_sample) as JSON, two
// ways: as a JSON value, for the pictures drawn from the trace, and written straight to the
// text that nlohmann::json's dump(1) gives for that value, for the trace file. A run keeps up
// to 20,000 of them by default, and a JSON object per message (eleven keys in a std::map)
// built, written and freed was a fifth of the instructions of a ring allreduce at p = 256.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "comm/message_log.hpp"

namespace collsim {

nlohmann::json single_messages_json(const std::vector<MessageRecord>& records);

// Appends single_messages_json(records).dump(1) as it appears nested `depth` levels deep in
// a document dumped with an indent of 1: its items indented by depth + 1 spaces, its
// closing bracket by depth.
void append_single_messages(std::string& out, const std::vector<MessageRecord>& records, int depth);

}  // namespace collsim
