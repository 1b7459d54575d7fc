#include "viz/step_through.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include "algorithms/chunks.hpp"
#include "algorithms/collective.hpp"
#include "viz/palette.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"

namespace collsim::viz {
namespace {

using Mask = uint64_t;  // bit r: rank r's contribution is in it
using Holds = std::vector<std::vector<Mask>>;  // [rank][piece]

// The pieces the messages cut the vector into: every first and last element of a message is
// a cut. Piece i is [cuts[i], cuts[i + 1]).
struct Pieces {
  std::vector<uint64_t> cuts;

  size_t count() const { return cuts.size() - 1; }
  // The pieces inside [first, first + length).
  std::vector<int> within(uint64_t first, uint64_t length) const {
    std::vector<int> out;
    const auto from = std::lower_bound(cuts.begin(), cuts.end(), first);
    for (auto at = from; at + 1 < cuts.end() && *(at + 1) <= first + length; ++at)
      out.push_back(static_cast<int>(at - cuts.begin()));
    return out;
  }
};

// What a collective starts from and must end with, per rank and piece.
struct Goal {
  Collective kind = Collective::allreduce;
  int ranks = 0, root = 0;
  uint64_t elements = 0;
  const Pieces* pieces = nullptr;

  Mask full() const { return ranks >= 64 ? ~Mask{0} : (Mask{1} << ranks) - 1; }
  // Rank r's block of an allgather, or its result of a reduce-scatter.
  std::vector<int> block(int r) const {
    const Chunk chunk = split_evenly(elements, ranks)[static_cast<size_t>(r)];
    return pieces->within(chunk.offset, chunk.count);
  }

  Holds start() const {
    Holds holds(static_cast<size_t>(ranks), std::vector<Mask>(pieces->count(), 0));
    for (int r = 0; r < ranks; ++r) {
      auto& mine = holds[static_cast<size_t>(r)];
      if (kind == Collective::broadcast) std::fill(mine.begin(), mine.end(), r == root ? full() : 0);
      else if (kind == Collective::allgather)
        for (int c : block(r)) mine[static_cast<size_t>(c)] = full();
      else std::fill(mine.begin(), mine.end(), Mask{1} << r);
    }
    return holds;
  }

  bool reached(const Holds& holds) const {
    auto final_at = [&](int r, const std::vector<int>& which) {
      return std::all_of(which.begin(), which.end(),
                         [&](int c) { return holds[static_cast<size_t>(r)][static_cast<size_t>(c)] == full(); });
    };
    std::vector<int> every(pieces->count());
    std::iota(every.begin(), every.end(), 0);
    for (int r = 0; r < ranks; ++r) {
      if (kind == Collective::reduce && r != root) continue;
      if (!final_at(r, kind == Collective::reduce_scatter ? block(r) : every)) return false;
    }
    return true;
  }
};

struct Frame {
  int phase = 0, step = 0;
  double start = 0, end = 0;
  std::vector<const TraceMessage*> messages;
};

// Replays the messages in time order: a message carries what its sender held of its pieces
// when the transfer started, and the receiver merges it when the transfer ends (ends first
// at equal times: a rank forwards what it has just received). Returns the holdings after
// each frame (the first entry: before any) and each message's pieces.
struct Replay {
  std::vector<Holds> snapshots;
  std::vector<std::vector<std::vector<int>>> pieces;  // [frame][message]
};

Replay replay(const std::vector<Frame>& frames, const Goal& goal) {
  struct Event {
    double time;
    int kind;  // 0: a transfer ends, 1: one starts
    size_t frame, message;
  };
  std::vector<Event> events;
  Replay out;
  out.pieces.resize(frames.size());
  std::vector<std::vector<std::vector<Mask>>> carried(frames.size());
  for (size_t f = 0; f < frames.size(); ++f) {
    carried[f].resize(frames[f].messages.size());
    for (size_t i = 0; i < frames[f].messages.size(); ++i) {
      const TraceMessage& m = *frames[f].messages[i];
      out.pieces[f].push_back(goal.pieces->within(static_cast<uint64_t>(m.first), m.elements));
      events.push_back({m.end, 0, f, i});
      events.push_back({m.start, 1, f, i});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.kind < b.kind); });
  Holds holds = goal.start();
  for (const Event& event : events) {
    const TraceMessage& m = *frames[event.frame].messages[event.message];
    const std::vector<int>& pieces = out.pieces[event.frame][event.message];
    std::vector<Mask>& payload = carried[event.frame][event.message];
    if (event.kind == 1)
      for (int c : pieces) payload.push_back(holds[static_cast<size_t>(m.src)][static_cast<size_t>(c)]);
    else
      for (size_t k = 0; k < pieces.size(); ++k) holds[static_cast<size_t>(m.dst)][static_cast<size_t>(pieces[k])] |= payload[k];
  }
  // What each rank holds once the messages of the frames so far have arrived.
  out.snapshots.push_back(goal.start());
  for (size_t f = 0; f < frames.size(); ++f) {
    Holds next = out.snapshots.back();
    for (size_t i = 0; i < frames[f].messages.size(); ++i)
      for (size_t k = 0; k < out.pieces[f][i].size(); ++k)
        next[static_cast<size_t>(frames[f].messages[i]->dst)][static_cast<size_t>(out.pieces[f][i][k])] |= carried[f][i][k];
    out.snapshots.push_back(std::move(next));
  }
  return out;
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
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i) label += ',';  // (appending in two steps: GCC 12's -Wrestrict misfires on "," + string&&)
    label += std::to_string(chunks[i]);
  }
  return label;
}

// Why the trace's messages cannot show the pieces each carried, or "" when they can.
std::string why_no_pieces(const TraceView& t, const std::vector<const TraceMessage*>& messages) {
  if (t.format < 2)
    return "This trace is collsim-trace/1: it does not say which elements each message carried (collsim-trace/2 "
           "does; run the scenario again to see them).";
  if (t.kind == "alltoall") return "An alltoall's blocks change place from sender to receiver: the steps show the messages only.";
  for (const TraceMessage* m : messages)
    if (m->first < 0)
      return fmt::format("The messages of {} step {} were not sent from the collective's vector, so which of its "
                         "elements they carried is not known.", t.phases[static_cast<size_t>(m->phase)], m->step);
  return "";
}

// The messages of the first round, in its first epoch (every round repeats the algorithm),
// by start time.
std::vector<const TraceMessage*> first_round(const TraceView& t, StepThrough& s) {
  s.round = std::min_element(t.messages.begin(), t.messages.end(), [](const auto& a, const auto& b) {
              return a.round < b.round;
            })->round;
  s.epoch = -1;
  std::vector<const TraceMessage*> messages;
  for (const auto& m : t.messages)
    if (m.round == s.round && (s.epoch < 0 || m.epoch < s.epoch)) s.epoch = m.epoch;
  for (const auto& m : t.messages)
    if (m.round == s.round && m.epoch == s.epoch) messages.push_back(&m);
  std::stable_sort(messages.begin(), messages.end(), [](const auto* a, const auto* b) { return a->start < b->start; });
  return messages;
}

// Frames: the messages of one (phase, step), in order of their first start; steps that
// start together in the order their phases first appear, then by step.
std::vector<Frame> frames_of(const std::vector<const TraceMessage*>& messages) {
  std::vector<Frame> frames;
  std::map<std::pair<int, int>, size_t> frame_of;
  std::vector<int> phase_order;
  for (const TraceMessage* m : messages) {
    auto [it, added] = frame_of.try_emplace({m->phase, m->step}, frames.size());
    if (added) frames.push_back({m->phase, m->step, m->start, m->end, {}});
    Frame& frame = frames[it->second];
    frame.messages.push_back(m);
    frame.start = std::min(frame.start, m->start);
    frame.end = std::max(frame.end, m->end);
    if (std::find(phase_order.begin(), phase_order.end(), m->phase) == phase_order.end()) phase_order.push_back(m->phase);
  }
  auto rank_of_phase = [&](int phase) { return std::find(phase_order.begin(), phase_order.end(), phase) - phase_order.begin(); };
  std::stable_sort(frames.begin(), frames.end(), [&](const Frame& a, const Frame& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.phase != b.phase) return rank_of_phase(a.phase) < rank_of_phase(b.phase);
    return a.step < b.step;
  });
  return frames;
}

Pieces pieces_of(const TraceView& t, const std::vector<const TraceMessage*>& messages) {
  Pieces pieces{{0}};
  uint64_t end = t.carried_elements;
  for (const TraceMessage* m : messages) {
    pieces.cuts.push_back(static_cast<uint64_t>(m->first));
    pieces.cuts.push_back(static_cast<uint64_t>(m->first) + m->elements);
    end = std::max(end, static_cast<uint64_t>(m->first) + m->elements);
  }
  pieces.cuts.push_back(end);
  std::sort(pieces.cuts.begin(), pieces.cuts.end());
  pieces.cuts.erase(std::unique(pieces.cuts.begin(), pieces.cuts.end()), pieces.cuts.end());
  if (pieces.cuts.size() < 2) pieces.cuts.push_back(1);
  return pieces;
}

// The step-through's frames, with the pieces each message carries and, when the replay
// ends in the collective's result, what every rank holds after each step.
void fill_frames(StepThrough& s, const TraceView& t, const std::vector<Frame>& frames, const Replay* found) {
  StepFrame first;
  first.label = "before the first step";
  first.start = first.end = frames.front().start;
  s.frames.push_back(first);
  // Labels count from 1, within the phase when there are several: "allgather step 2 of 3".
  std::map<int, int> steps_of_phase, seen_of_phase;
  for (const Frame& frame : frames) ++steps_of_phase[frame.phase];
  for (size_t f = 0; f < frames.size(); ++f) {
    const Frame& frame = frames[f];
    StepFrame out;
    out.phase = frame.phase;
    out.step = frame.step;
    const std::string& phase = t.phases[static_cast<size_t>(frame.phase)];
    const int ordinal = ++seen_of_phase[frame.phase];
    out.label = steps_of_phase.size() == 1 ? phase
                                           : fmt::format("{} step {} of {}", phase, ordinal, steps_of_phase[frame.phase]);
    out.start = frame.start;
    out.end = frame.end;
    for (size_t i = 0; i < frame.messages.size(); ++i) {
      const TraceMessage& m = *frame.messages[i];
      StepMessage message{m.src, m.dst, m.bytes, {}, "", m.phase};
      if (found) {
        message.chunks = found->pieces[f][i];
        message.label = s.chunks == 1 ? "the vector" : chunk_label(message.chunks, s.chunks);
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
}

}  // namespace

StepThrough derive_step_through(const TraceView& t, int max_ranks) {
  StepThrough s;
  s.ranks = t.workers;
  if (t.per_step) s.why_not = "The step-through needs every message: " + describe_sample(t) + ".";
  else if (t.workers > max_ranks)
    s.why_not = fmt::format("The step-through is drawn up to {} ranks; this run has {}.", max_ranks, t.workers);
  else if (t.messages.empty()) s.why_not = "The run sent no messages.";
  if (!s.why_not.empty()) return s;
  const std::vector<const TraceMessage*> messages = first_round(t, s);
  if (messages.size() > step_through_max_messages) {
    s.why_not = fmt::format("Round {} sent {} messages; the step-through is drawn up to {}.", s.round, messages.size(),
                            step_through_max_messages);
    return s;
  }
  const std::vector<Frame> frames = frames_of(messages);

  // The pieces come from the elements each message carried, as the trace records them.
  std::string unknown = why_no_pieces(t, messages);
  const Pieces pieces = unknown.empty() ? pieces_of(t, messages) : Pieces{{0, 1}};
  if (unknown.empty() && pieces.count() > static_cast<size_t>(step_through_max_chunks))
    unknown = fmt::format("The messages cut the vector into {} pieces; the grid is drawn up to {}.", pieces.count(),
                          step_through_max_chunks);
  std::optional<Replay> found;
  if (unknown.empty()) {
    const Goal goal{parse_collective(t.kind, "scenario.collective.kind"), t.workers, t.root, t.carried_elements, &pieces};
    Replay attempt = replay(frames, goal);
    if (goal.reached(attempt.snapshots.back())) found = std::move(attempt);
    else unknown = "Replaying the elements each message carried does not end in the collective's result (was an "
                   "operation abandoned?).";
  }

  s.available = true;
  s.chunk_model = found.has_value();
  s.chunks = s.chunk_model ? static_cast<int>(pieces.count()) : 0;
  s.model = !s.chunk_model ? "" : s.chunks == 1 ? "whole vector" : "pieces";
  s.note = fmt::format("Round {}", s.round);
  if (s.epoch > 0 || t.rounds.size() > 1) s.note += fmt::format(", epoch {}", s.epoch);
  s.note += fmt::format(": {} messages in {} steps.", messages.size(), frames.size());
  if (s.chunks == 1) s.note += " Every message carries the whole vector.";
  else if (s.chunk_model)
    s.note += fmt::format(" The elements the messages carried cut the vector into {} chunks; each arrow names the "
                          "chunks it carries.", s.chunks);
  else s.note += " " + unknown + " The steps show the messages and their sizes only.";
  fill_frames(s, t, frames, found ? &*found : nullptr);
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
                      {"time", short_time(f.start) + " – " + short_time(f.end)}, {"size", messages.empty() ? "" : format_size(f.messages.front().bytes, 3)},
                      {"messages", messages}, {"holds", f.holds}});
  }
  out["frames"] = frames;
  return out;
}

}  // namespace collsim::viz
