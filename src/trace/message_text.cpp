#include "trace/message_text.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

using nlohmann::json;

namespace collsim {

json single_messages_json(const std::vector<MessageRecord>& records) {
  json messages = json::array();
  for (const auto& m : records) {
    messages.push_back({{"src", m.src}, {"dst", m.dst}, {"bytes", m.bytes}, {"start", m.start}, {"end", m.end},
                        {"step", m.step}, {"phase", m.phase}, {"epoch", m.epoch}, {"round", m.round},
                        {"elements", m.first < 0 ? json(nullptr) : json::array({m.first, m.elements})}});
    if (m.bucket >= 0) messages.back()["bucket"] = m.bucket;  // layered training only
  }
  return messages;
}

namespace {

// Room for a number: 20 digits of an integer, or what nlohmann's to_chars asks for a double.
constexpr int number_room = 32;

// Writes one message's fields in nlohmann's order (its objects are std::maps: keys sorted)
// into a buffer of its own, appended to the text in one piece.
class MessageWriter {
public:
  MessageWriter(std::string& out, int depth) : out_(out), depth_(depth) {}

  void write(const MessageRecord& m) {
    const std::string& phase = escaped(m.phase);
    // Sixteen lines of at most depth + 3 spaces; eleven keys of at most 10 characters with
    // their quotes and punctuation, each with room for a number; and the phase.
    buffer_.resize(16 * static_cast<size_t>(depth_ + 4) + 11 * (16 + number_room) + phase.size());
    at_ = buffer_.data();
    indent(depth_ + 1);
    text("{\n");
    if (m.bucket >= 0) integer("bucket", m.bucket);
    integer("bytes", m.bytes);
    integer("dst", m.dst);
    key("elements");
    if (m.first < 0) {
      text("null,\n");
    } else {
      text("[\n");
      indent(depth_ + 3);
      number(m.first);
      text(",\n");
      indent(depth_ + 3);
      number(m.elements);
      text("\n");
      indent(depth_ + 2);
      text("],\n");
    }
    real("end", m.end);
    integer("epoch", m.epoch);
    key("phase");
    text(phase);
    text(",\n");
    integer("round", m.round);
    integer("src", m.src);
    real("start", m.start);
    key("step");
    number(m.step);
    text("\n");
    indent(depth_ + 1);
    text("}");
    out_.append(buffer_.data(), static_cast<size_t>(at_ - buffer_.data()));
  }

private:
  void text(std::string_view piece) {
    std::memcpy(at_, piece.data(), piece.size());
    at_ += piece.size();
  }

  void indent(int spaces) {
    std::memset(at_, ' ', static_cast<size_t>(spaces));
    at_ += spaces;
  }

  void key(std::string_view name) {
    indent(depth_ + 2);
    text("\"");
    text(name);
    text("\": ");
  }

  template <typename Integer>
  void number(Integer value) {
    at_ = std::to_chars(at_, at_ + number_room, value).ptr;
  }

  template <typename Integer>
  void integer(std::string_view name, Integer value) {
    key(name);
    number(value);
    text(",\n");
  }

  // nlohmann's own shortest round-trip form ("0.0", "1e-06"), so the text is what dump() gives.
  void real(std::string_view name, double value) {
    key(name);
    if (std::isfinite(value)) at_ = nlohmann::detail::to_chars(at_, at_ + number_room, value);
    else text("null");
    text(",\n");
  }

  // Phases are string literals, a handful per run: each is escaped once.
  const std::string& escaped(const char* phase) {
    for (const auto& [literal, quoted] : phases_)
      if (literal == phase) return quoted;
    phases_.emplace_back(phase, json(phase).dump());
    return phases_.back().second;
  }

  std::string& out_;
  int depth_;
  std::vector<char> buffer_;
  char* at_ = nullptr;
  std::vector<std::pair<const char*, std::string>> phases_;
};

}  // namespace

void append_single_messages(std::string& out, const std::vector<MessageRecord>& records, int depth) {
  if (records.empty()) {
    out += "[]";
    return;
  }
  out.reserve(out.size() + records.size() * static_cast<size_t>(200 + 12 * depth));  // about what each takes
  out += "[\n";
  MessageWriter writer(out, depth);
  for (size_t i = 0; i < records.size(); ++i) {
    writer.write(records[i]);
    out += i + 1 < records.size() ? ",\n" : "\n";
  }
  out.append(static_cast<size_t>(depth), ' ');
  out += ']';
}

}  // namespace collsim
