#include "viz/step_through.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <optional>

#include "viz/palette.hpp"
#include "util/suggest.hpp"
#include "viz/svg.hpp"

namespace collsim::viz {
namespace {

using Mask = uint64_t;  // bit r: rank r's contribution is in it

int mod(int a, int p) { return ((a % p) + p) % p; }

// What a collective starts from and must end with, per rank and chunk.
struct Goal {
  std::string kind;
  int ranks = 0, chunks = 0, root = 0;

  Mask full() const { return ranks >= 64 ? ~Mask{0} : (Mask{1} << ranks) - 1; }

  std::vector<std::vector<Mask>> start() const {
    std::vector<std::vector<Mask>> holds(static_cast<size_t>(ranks), std::vector<Mask>(static_cast<size_t>(chunks), 0));
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < chunks; ++c) {
        Mask& m = holds[static_cast<size_t>(r)][static_cast<size_t>(c)];
        if (kind == "broadcast") m = r == root ? full() : 0;
        else if (kind == "allgather") m = (chunks == ranks && c == r) ? full() : 0;
        else m = Mask{1} << r;
      }
    return holds;
  }

  bool reached(const std::vector<std::vector<Mask>>& holds) const {
    auto all_final = [&](int r) {
      return std::all_of(holds[static_cast<size_t>(r)].begin(), holds[static_cast<size_t>(r)].end(),
                         [&](Mask m) { return m == full(); });
    };
    if (kind == "reduce") return all_final(root);
    if (kind == "reduce-scatter") {
      std::vector<bool> covered(static_cast<size_t>(chunks), false);
      for (int r = 0; r < ranks; ++r) {
        bool owns = false;
        for (int c = 0; c < chunks; ++c)
          if (holds[static_cast<size_t>(r)][static_cast<size_t>(c)] == full()) owns = covered[static_cast<size_t>(c)] = true;
        if (!owns) return false;
      }
      return std::all_of(covered.begin(), covered.end(), [](bool b) { return b; });
    }
    for (int r = 0; r < ranks; ++r)
      if (!all_final(r)) return false;
    return true;
  }
};

struct Frame {
  int phase = 0, step = 0;
  double start = 0, end = 0;
  std::vector<const TraceMessage*> messages;
};

using Holds = std::vector<std::vector<Mask>>;  // [rank][chunk]

// Which chunks a message carries, given what the ranks hold when it starts; false when
// the rule does not fit the message.
using ChunksOf = std::function<bool(const TraceMessage&, const Holds&, std::vector<int>&)>;

// Replays the messages in time order: a message carries what its sender held of its
// chunks when the transfer started, and the receiver merges it when the transfer ends
// (ends first at equal times: a rank forwards what it has just received). Returns the
// holdings after each frame (the first entry: before any) and each message's chunks, or
// nothing when the rule does not fit a message.
struct Replay {
  std::vector<Holds> snapshots;
  std::vector<std::vector<std::vector<int>>> chunks;  // [frame][message]
};

std::optional<Replay> replay(const std::vector<Frame>& frames, const Goal& goal, const ChunksOf& chunks_of) {
  struct Event {
    double time;
    int kind;  // 0: a transfer ends, 1: one starts
    size_t frame, message;
  };
  std::vector<Event> events;
  for (size_t f = 0; f < frames.size(); ++f)
    for (size_t i = 0; i < frames[f].messages.size(); ++i) {
      events.push_back({frames[f].messages[i]->end, 0, f, i});
      events.push_back({frames[f].messages[i]->start, 1, f, i});
    }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.kind < b.kind); });
  Replay out;
  std::vector<std::vector<std::vector<Mask>>> carried(frames.size());
  out.chunks.resize(frames.size());
  for (size_t f = 0; f < frames.size(); ++f) {
    carried[f].resize(frames[f].messages.size());
    out.chunks[f].resize(frames[f].messages.size());
  }
  Holds holds = goal.start();
  for (const Event& event : events) {
    const TraceMessage& m = *frames[event.frame].messages[event.message];
    std::vector<int>& chunks = out.chunks[event.frame][event.message];
    std::vector<Mask>& payload = carried[event.frame][event.message];
    if (event.kind == 1) {
      if (!chunks_of(m, holds, chunks) || chunks.empty()) return std::nullopt;
      for (int c : chunks) {
        if (c < 0 || c >= goal.chunks) return std::nullopt;
        payload.push_back(holds[static_cast<size_t>(m.src)][static_cast<size_t>(c)]);
      }
    } else {
      for (size_t k = 0; k < chunks.size(); ++k)
        holds[static_cast<size_t>(m.dst)][static_cast<size_t>(chunks[k])] |= payload[k];
    }
  }
  // What each rank holds once the messages of the frames so far have arrived.
  out.snapshots.push_back(goal.start());
  for (size_t f = 0; f < frames.size(); ++f) {
    Holds next = out.snapshots.back();
    for (size_t i = 0; i < frames[f].messages.size(); ++i)
      for (size_t k = 0; k < out.chunks[f][i].size(); ++k)
        next[static_cast<size_t>(frames[f].messages[i]->dst)][static_cast<size_t>(out.chunks[f][i][k])] |= carried[f][i][k];
    out.snapshots.push_back(std::move(next));
  }
  return out;
}

// A way of telling a message's chunks, and whether it can fit a phase's messages at all.
struct Rule {
  std::string name;
  std::function<bool(const TraceMessage&)> fits;
  ChunksOf chunks;
};

// The rules that may tell a phase's chunks when the vector is cut into one chunk per rank
// (chunk c is rank c's share): ring steps, halving and doubling exchanges (blocks or strides
// of chunks at the partner's distance d = src xor dst), tree scatters, and "all it holds".
std::vector<Rule> chunk_rules(const TraceView& t) {
  const int p = t.workers;
  const double chunk_bytes = t.size / p;
  auto count = [chunk_bytes](const TraceMessage& m) {
    return std::max<long>(1, std::lround(m.bytes / chunk_bytes));
  };
  auto distance = [p](const TraceMessage& m) {
    const int d = m.src ^ m.dst;
    return (std::has_single_bit(static_cast<unsigned>(p)) && std::has_single_bit(static_cast<unsigned>(d))) ? d : 0;
  };
  std::vector<Rule> rules;
  rules.push_back({"whole vector", [&t](const TraceMessage& m) { return m.bytes >= t.size * (1 - 1e-9); },
                   [p](const TraceMessage&, const Holds&, std::vector<int>& out) {
                     for (int c = 0; c < p; ++c) out.push_back(c);
                     return true;
                   }});
  for (int offset = 0; offset < p; ++offset)
    rules.push_back({"ring", [count](const TraceMessage& m) { return count(m) == 1; },
                     [p, offset](const TraceMessage& m, const Holds&, std::vector<int>& out) {
                       out.push_back(mod(m.src - m.step + offset, p));
                       return true;
                     }});
  // Halving and doubling: a block of d chunks (c / d equal to the rank's), or a stride
  // (c mod 2d equal to the rank's), of the receiver's part or of the sender's.
  for (const bool block : {true, false})
    for (const bool receiver_part : {true, false})
      rules.push_back({"halving-doubling",
                       [=](const TraceMessage& m) {
                         const int d = distance(m);
                         return d > 0 && count(m) == (block ? d : p / (2 * d));
                       },
                       [=](const TraceMessage& m, const Holds&, std::vector<int>& out) {
                         const int d = distance(m), x = receiver_part ? m.dst : m.src;
                         for (int c = 0; c < p; ++c)
                           if (block ? c / d == x / d : c % (2 * d) == x % (2 * d)) out.push_back(c);
                         return true;
                       }});
  rules.push_back({"tree scatter", [](const TraceMessage&) { return true; },
                   [&t, p, count](const TraceMessage& m, const Holds&, std::vector<int>& out) {
                     const int first = mod(m.dst - t.root, p), k = static_cast<int>(count(m));
                     if (first + k > p) return false;
                     for (int c = 0; c < p; ++c)
                       if (mod(c - t.root, p) >= first && mod(c - t.root, p) < first + k) out.push_back(c);
                     return true;
                   }});
  rules.push_back({"all it holds", [](const TraceMessage&) { return true; },
                   [p, count](const TraceMessage& m, const Holds& holds, std::vector<int>& out) {
                     for (int c = 0; c < p; ++c)
                       if (holds[static_cast<size_t>(m.src)][static_cast<size_t>(c)] != 0) out.push_back(c);
                     return static_cast<long>(out.size()) == count(m);
                   }});
  return rules;
}

// "c3", "c2–5", "c0,2,4,6", "all".
std::string chunk_label(const std::vector<int>& chunks, int total) {
  if (chunks.empty()) return "";
  if (static_cast<int>(chunks.size()) == total && total > 1) return "all";
  bool contiguous = true;
  for (size_t i = 1; i < chunks.size(); ++i) contiguous = contiguous && chunks[i] == chunks[i - 1] + 1;
  if (chunks.size() == 1) return fmt::format("c{}", chunks.front());
  if (contiguous) return fmt::format("c{}–{}", chunks.front(), chunks.back());
  std::string label = "c";
  for (size_t i = 0; i < chunks.size(); ++i) label += (i ? "," : "") + std::to_string(chunks[i]);
  return label;
}

}  // namespace

StepThrough derive_step_through(const TraceView& t, int max_ranks) {
  StepThrough s;
  s.ranks = t.workers;
  if (t.per_step) {
    s.why_not = "The step-through needs every message: " + describe_sample(t) + ".";
    return s;
  }
  if (t.workers > max_ranks) {
    s.why_not = fmt::format("The step-through is drawn up to {} ranks; this run has {}.", max_ranks, t.workers);
    return s;
  }
  if (t.messages.empty()) {
    s.why_not = "The run sent no messages.";
    return s;
  }
  // The first round, in its first epoch: every round repeats the algorithm.
  s.round = std::min_element(t.messages.begin(), t.messages.end(), [](const auto& a, const auto& b) {
              return a.round < b.round;
            })->round;
  s.epoch = -1;
  std::vector<const TraceMessage*> messages;
  for (const auto& m : t.messages)
    if (m.round == s.round && (s.epoch < 0 || m.epoch < s.epoch)) s.epoch = m.epoch;
  for (const auto& m : t.messages)
    if (m.round == s.round && m.epoch == s.epoch) messages.push_back(&m);
  if (messages.size() > step_through_max_messages) {
    s.why_not = fmt::format("Round {} sent {} messages; the step-through is drawn up to {}.", s.round, messages.size(),
                            step_through_max_messages);
    return s;
  }
  std::stable_sort(messages.begin(), messages.end(), [](const auto* a, const auto* b) { return a->start < b->start; });

  // Frames: the messages of one (phase, step), in order of their first start.
  std::vector<Frame> frames;
  std::map<std::pair<int, int>, size_t> frame_of;
  for (const TraceMessage* m : messages) {
    auto [it, added] = frame_of.try_emplace({m->phase, m->step}, frames.size());
    if (added) frames.push_back({m->phase, m->step, m->start, m->end, {}});
    Frame& frame = frames[it->second];
    frame.messages.push_back(m);
    frame.start = std::min(frame.start, m->start);
    frame.end = std::max(frame.end, m->end);
  }

  // Steps that start together are shown in step order.
  std::vector<int> phase_order;
  for (const TraceMessage* m : messages)
    if (std::find(phase_order.begin(), phase_order.end(), m->phase) == phase_order.end()) phase_order.push_back(m->phase);
  auto rank_of_phase = [&](int phase) { return std::find(phase_order.begin(), phase_order.end(), phase) - phase_order.begin(); };
  std::stable_sort(frames.begin(), frames.end(), [&](const Frame& a, const Frame& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.phase != b.phase) return rank_of_phase(a.phase) < rank_of_phase(b.phase);
    return a.step < b.step;
  });

  // Try the chunk models that fit the algorithm; keep the first whose replay reproduces the
  // collective's result.
  Goal goal{t.kind, t.workers, 1, t.root};
  std::optional<Replay> found;
  const int p = t.workers;
  const bool whole = std::all_of(messages.begin(), messages.end(),
                                 [&](const TraceMessage* m) { return m->bytes >= t.size * (1 - 1e-9); });
  auto reaches = [&](const ChunksOf& chunks_of) {
    auto attempt = replay(frames, goal, chunks_of);
    if (attempt && goal.reached(attempt->snapshots.back())) found = std::move(attempt);
    return found.has_value();
  };
  if (whole) {
    goal.chunks = 1;
    if (reaches([](const TraceMessage&, const Holds&, std::vector<int>& out) {
          out.push_back(0);
          return true;
        }))
      s.model = "whole vector";
  }
  if (s.model.empty() && t.algorithm.find("pipeline") != std::string::npos) {
    int segments = 0;
    for (const TraceMessage* m : messages) segments = std::max(segments, m->step - mod(m->src - t.root, p) + 1);
    goal.chunks = segments;
    if (segments >= 1 && segments <= step_through_max_chunks &&
        reaches([&t, p](const TraceMessage& m, const Holds&, std::vector<int>& out) {
          out.push_back(m.step - mod(m.src - t.root, p));
          return true;
        }))
      s.model = "pipeline segments";
  }
  if (s.model.empty() && p <= step_through_max_chunks) {
    // One chunk per rank: find for each phase a rule that fits all its messages.
    goal.chunks = p;
    const std::vector<Rule> rules = chunk_rules(t);
    std::vector<int> phases;
    for (const Frame& frame : frames)
      if (std::find(phases.begin(), phases.end(), frame.phase) == phases.end()) phases.push_back(frame.phase);
    std::vector<std::vector<size_t>> candidates(phases.size());
    size_t combinations = 1;
    for (size_t i = 0; i < phases.size(); ++i) {
      for (size_t r = 0; r < rules.size(); ++r)
        if (std::all_of(messages.begin(), messages.end(),
                        [&](const TraceMessage* m) { return m->phase != phases[i] || rules[r].fits(*m); }))
          candidates[i].push_back(r);
      combinations *= std::max<size_t>(1, candidates[i].size());
    }
    std::map<int, size_t> chosen;  // phase -> rule
    const ChunksOf by_phase = [&](const TraceMessage& m, const Holds& holds, std::vector<int>& out) {
      return rules[chosen.at(m.phase)].chunks(m, holds, out);
    };
    std::function<bool(size_t)> search = [&](size_t depth) {
      if (depth == phases.size()) return reaches(by_phase);
      for (size_t r : candidates[depth]) {
        chosen[phases[depth]] = r;
        if (search(depth + 1)) return true;
      }
      return false;
    };
    if (combinations <= 20000 && search(0)) {
      std::vector<std::string> names;
      for (int phase : phases)
        if (std::find(names.begin(), names.end(), rules[chosen[phase]].name) == names.end())
          names.push_back(rules[chosen[phase]].name);
      s.model = join(names, " + ");
    }
  }

  s.available = true;
  s.chunk_model = !s.model.empty();
  s.chunks = s.chunk_model ? goal.chunks : 0;
  s.note = fmt::format("Round {}", s.round);
  if (s.epoch > 0 || t.rounds.size() > 1) s.note += fmt::format(", epoch {}", s.epoch);
  s.note += fmt::format(": {} messages in {} steps.", messages.size(), frames.size());
  if (s.model == "whole vector") s.note += " Every message carries the whole vector.";
  else if (s.model == "pipeline segments")
    s.note += fmt::format(" The vector is cut into {} segments that follow each other down the chain.", goal.chunks);
  else if (!s.model.empty())
    s.note += fmt::format(" The vector is cut into {} chunks, chunk c being rank c's share; each message carries the "
                          "chunks named on its arrow.", p);
  if (!s.chunk_model)
    s.note += " Which elements each message carried cannot be told from the trace for this algorithm: the steps show "
              "the messages and their sizes only.";

  StepFrame first;
  first.label = "before the first step";
  first.start = first.end = frames.front().start;
  s.frames.push_back(first);
  for (size_t f = 0; f < frames.size(); ++f) {
    const Frame& frame = frames[f];
    StepFrame out;
    out.phase = frame.phase;
    out.step = frame.step;
    out.label = fmt::format("{} step {}", t.phases[static_cast<size_t>(frame.phase)], frame.step);
    out.start = frame.start;
    out.end = frame.end;
    for (size_t i = 0; i < frame.messages.size(); ++i) {
      const TraceMessage& m = *frame.messages[i];
      StepMessage message{m.src, m.dst, m.bytes, {}, "", m.phase};
      if (found) {
        message.chunks = found->chunks[f][i];
        message.label = goal.chunks == 1 ? "the vector" : chunk_label(message.chunks, goal.chunks);
      }
      out.messages.push_back(message);
    }
    std::stable_sort(out.messages.begin(), out.messages.end(), [](const StepMessage& a, const StepMessage& b) {
      return std::pair(a.src, a.dst) < std::pair(b.src, b.dst);
    });
    s.frames.push_back(out);
  }
  if (found)
    for (size_t f = 0; f < s.frames.size(); ++f)
      for (const auto& rank : found->snapshots[f]) {
        std::vector<int> counts;
        for (Mask m : rank) counts.push_back(std::popcount(m));
        s.frames[f].holds.push_back(counts);
      }
  return s;
}

nlohmann::json step_through_json(const StepThrough& s, const TraceView& t) {
  using nlohmann::json;
  json out{{"available", s.available}, {"why_not", s.why_not}, {"ranks", s.ranks}, {"chunks", s.chunks},
           {"chunk_model", s.chunk_model}, {"model", s.model}, {"note", s.note}, {"kind", t.kind},
           {"root", t.root}, {"phases", t.phases}, {"hosts", t.rank_hosts}};
  const Palette palette(t.phases);
  json colors = json::array();
  for (size_t i = 0; i < t.phases.size(); ++i) colors.push_back(palette.color(static_cast<int>(i)));
  out["colors"] = colors;
  json frames = json::array();
  for (const auto& f : s.frames) {
    json messages = json::array();
    for (const auto& m : f.messages) messages.push_back({m.src, m.dst, m.chunks, m.bytes, m.label});
    frames.push_back({{"label", f.label}, {"phase", f.phase}, {"step", f.step}, {"start", f.start}, {"end", f.end},
                      {"time", short_time(f.start) + " – " + short_time(f.end)}, {"size", messages.empty() ? "" : short_size(f.messages.front().bytes)},
                      {"messages", messages}, {"holds", f.holds}});
  }
  out["frames"] = frames;
  return out;
}

}  // namespace collsim::viz
