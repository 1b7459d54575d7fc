#pragma once
// Every message an algorithm sends, as the receiver saw it complete.
#include <cstdint>
#include <vector>

namespace collsim {

struct MessageRecord {
  int src = 0;              // world rank of the sender
  int dst = 0;              // world rank of the receiver
  uint64_t bytes = 0;       // simulated (logical) bytes on the wire
  double start = 0;         // transfer start: both sides posted (SimGrid's rendezvous)
  double end = 0;           // the receiver got the data
  int step = 0;             // algorithm step, as labelled by the sender
  const char* phase = "";   // algorithm phase ("reduce-scatter", ...), a string literal
  int epoch = 0;            // group generation
  int round = 0;            // training round of the sender
};

class MessageLog {
public:
  void add(const MessageRecord& record) { records_.push_back(record); }
  const std::vector<MessageRecord>& records() const { return records_; }
  void reserve(size_t n) { records_.reserve(n); }

private:
  std::vector<MessageRecord> records_;
};

}  // namespace collsim
