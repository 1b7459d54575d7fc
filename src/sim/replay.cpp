#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "algorithms/chunks.hpp"
#include "algorithms/registry.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

// One collective of the group (its index in every rank's sequence), while ranks are in it.
struct CollectiveReplay::Instance {
  bool decided = false, replay = false, recording = false;
  ReplayShape shape;
  double start = 0;                     // the first rank's entry
  std::vector<double> entries, nexts;   // declared, by rank (when every rank declared)
  std::vector<double> gaps;             // declared: each rank's least time from its end to its next entry
  std::vector<double> ends;             // replayed: each rank's end; recorded: as simulated
  std::vector<Buffer*> buffers;         // replayed: each rank's bucket, for the data
  int entered = 0, left = 0;
  int64_t network_version = 0;          // recording: the network's when it began
};

// A collective simulated alone, from its start to its end.
struct CollectiveReplay::Record {
  ReplayShape shape;
  std::vector<double> offsets;    // each rank's entry after the first's
  double start = 0;
  std::vector<double> durations;  // by rank, from its entry to its end
  LogCapture messages;            // what its messages added to the log
  int64_t network_version = 0;    // faults applied or undone before it
};

namespace {

// The same logical layout (the same layers' elements: what the network carries), and with
// `carried`, the same carried layout too (what the messages' elements name).
bool same_layout(const CarriedMap& a, const CarriedMap& b, bool carried) {
  if ((carried && a.carried != b.carried) || a.logical != b.logical || !a.pieces != !b.pieces) return false;
  if (!a.pieces || a.pieces == b.pieces) return true;
  return std::equal(a.pieces->begin(), a.pieces->end(), b.pieces->begin(), b.pieces->end(),
                    [carried](const CarriedMap::Start& x, const CarriedMap::Start& y) {
                      return x.logical == y.logical && (!carried || x.carried == y.carried);
                    });
}

// Times depend on the logical layout only: so does the choice to replay, whatever is carried.
bool same_shape(const ReplayShape& a, const ReplayShape& b) {
  return a.algorithm == b.algorithm && a.launch == b.launch && same_layout(a.map, b.map, false);
}

}  // namespace

CollectiveReplay::CollectiveReplay(int ranks, std::string why_off, MessageLog& log, OpKind op, Dtype dtype)
    : ranks_(ranks), why_off_(std::move(why_off)), log_(&log), op_(op, dtype),
      next_seq_(static_cast<size_t>(ranks), 0), declared_(static_cast<size_t>(ranks)),
      entered_(static_cast<size_t>(ranks)) {}

CollectiveReplay::~CollectiveReplay() = default;

void CollectiveReplay::declare(int rank, double entry, double next_earliest, double next_gap) {
  if (!enabled()) return;
  const int64_t seq = next_seq_[static_cast<size_t>(rank)];
  Declared& mine = declared_[static_cast<size_t>(rank)];
  if (mine.seq != seq) {
    if (declared_count_.size() <= static_cast<size_t>(seq)) declared_count_.resize(static_cast<size_t>(seq) + 1, 0);
    ++declared_count_[static_cast<size_t>(seq)];
  }
  mine = {seq, entry, next_earliest, next_gap};
  ++events_;
}

bool CollectiveReplay::all_declared(int64_t seq) const {
  return static_cast<size_t>(seq) < declared_count_.size() && declared_count_[static_cast<size_t>(seq)] == ranks_;
}

CollectiveReplay::Instance& CollectiveReplay::instance(int64_t seq) {
  std::unique_ptr<Instance>& slot = live_[seq];
  if (!slot) slot = std::make_unique<Instance>();
  return *slot;
}

std::optional<double> CollectiveReplay::enter(int rank, const ReplayShape& shape, Buffer& bucket) {
  if (!enabled()) return std::nullopt;
  const auto r = static_cast<size_t>(rank);
  const double now = sg4::Engine::get_clock();
  const int64_t seq = next_seq_[r]++;
  entered_[r] = {seq, now};
  // (a sleep until the declared time may wake an ulp away from it)
  const bool declared = declared_[r].seq == seq && std::abs(declared_[r].entry - now) <= 1e-12 * std::max(1.0, std::abs(now));
  Instance& inst = instance(seq);
  if (!inst.decided && declared && !all_declared(seq)) await_this_instant(inst, seq);
  if (!inst.decided) {
    inst.decided = true;
    if (declared && all_declared(seq)) decide(inst, shape);
    else ++simulated_;
  }
  if (!inst.replay) return std::nullopt;
  if (!declared) throw std::logic_error("replay: a rank entered a replayed collective off its declared time");
  inst.buffers[r] = &bucket;
  if (++inst.entered == ranks_) reduce_data(inst);
  return inst.ends[r];
}

// Ranks that leave their previous collective at this same instant may not have run yet
// (a queued bucket's ranks enter it as they leave the one before): they wake in several
// scheduling rounds of the instant (a ring with channels ends in rounds of one rank per
// node). A wait with a timeout of zero returns at the engine's next step, which comes at
// this same instant once every actor that can run now has run; it is repeated while those
// rounds declared or left something. No simulated time passes.
void CollectiveReplay::await_this_instant(const Instance& inst, int64_t seq) {
  if (!instant_) {
    instant_lock_ = sg4::Mutex::create();
    instant_ = sg4::ConditionVariable::create();
  }
  std::unique_lock<sg4::Mutex> lock(*instant_lock_);
  int64_t before = 0;
  do {
    before = events_;
    instant_->wait_for(lock, 0);
  } while (!inst.decided && !all_declared(seq) && events_ != before);
}

void CollectiveReplay::decide(Instance& inst, const ReplayShape& shape) {
  inst.shape = shape;
  inst.entries.resize(static_cast<size_t>(ranks_));
  inst.nexts.resize(static_cast<size_t>(ranks_));
  inst.gaps.resize(static_cast<size_t>(ranks_));
  for (size_t r = 0; r < declared_.size(); ++r) {
    inst.entries[r] = declared_[r].entry;
    inst.nexts[r] = declared_[r].next;
    inst.gaps[r] = declared_[r].gap;
  }
  inst.start = *std::min_element(inst.entries.begin(), inst.entries.end());
  std::vector<double> offsets(inst.entries.size());
  for (size_t r = 0; r < offsets.size(); ++r) offsets[r] = inst.entries[r] - inst.start;
  const Record* record = find(shape, offsets);
  if (record != nullptr && fits(inst, *record) && clear_of_faults(inst, *record)) {
    start_replay(inst, *record, shape);
    return;
  }
  ++simulated_;
  inst.ends.assign(static_cast<size_t>(ranks_), 0.0);
  if (record != nullptr || faults_in_effect_ > 0) return;
  inst.recording = true;
  inst.network_version = network_version_;
  log_->begin_capture(sg4::Engine::get_clock());
}

// The same entry offsets to rounding: ranks that enter after a collective whose ends are
// staggered (a ring on nodes of fast and slow links) repeat the same offsets round after
// round, as differences of absolute times that differ in their last bits. A picosecond in a
// collective of a millisecond is far below the 1e-9 to which replayed times must agree.
static bool same_offsets(const std::vector<double>& a, const std::vector<double>& b, double span) {
  if (a.size() != b.size()) return false;
  const double tolerance = 1e-12 * std::max(span, 1e-9);
  for (size_t r = 0; r < a.size(); ++r)
    if (std::abs(a[r] - b[r]) > tolerance) return false;
  return true;
}

const CollectiveReplay::Record* CollectiveReplay::find(const ReplayShape& shape, const std::vector<double>& offsets) const {
  for (const auto& record : records_) {
    const double span = *std::max_element(record->durations.begin(), record->durations.end());
    if (record->network_version == network_version_ && same_shape(record->shape, shape) &&
        same_offsets(record->offsets, offsets, span))
      return record.get();
  }
  return nullptr;
}

// Alone to its end (no rank may start its next collective before the last one leaves)
// and its data ready (every rank ends after the last one entered).
bool CollectiveReplay::fits(const Instance& inst, const Record& record) const {
  const double last_entry = *std::max_element(inst.entries.begin(), inst.entries.end());
  double last_end = 0;
  for (size_t r = 0; r < inst.entries.size(); ++r) last_end = std::max(last_end, inst.entries[r] + record.durations[r]);
  for (size_t r = 0; r < inst.entries.size(); ++r) {
    const double end = inst.entries[r] + record.durations[r];
    if (!(end > last_entry)) return false;
    if (end != last_end && std::max(inst.nexts[r], end + inst.gaps[r]) < last_end) return false;
  }
  return true;
}

// No fault in effect, and none strikes or ends from its start to its last rank's end.
bool CollectiveReplay::clear_of_faults(const Instance& inst, const Record& record) const {
  if (faults_in_effect_ > 0) return false;
  double last_end = inst.start;
  for (size_t r = 0; r < inst.entries.size(); ++r) last_end = std::max(last_end, inst.entries[r] + record.durations[r]);
  return std::none_of(fault_times_.begin(), fault_times_.end(),
                      [&](double t) { return t >= inst.start && t <= last_end; });
}

void CollectiveReplay::plan_faults(std::vector<double> times) { fault_times_ = std::move(times); }

void CollectiveReplay::fault_changed(int in_effect, double undone_at) {
  ++network_version_;
  faults_in_effect_ += in_effect;
  if (undone_at >= 0) fault_times_.push_back(undone_at);
}

// Each rank's end from the record, and the record's messages into the log, moved to this
// collective's start, round, bucket and place in the vector.
void CollectiveReplay::start_replay(Instance& inst, const Record& record, const ReplayShape& shape) {
  inst.replay = true;
  ++replayed_;
  inst.buffers.assign(static_cast<size_t>(ranks_), nullptr);
  inst.ends.resize(static_cast<size_t>(ranks_));
  for (size_t r = 0; r < inst.ends.size(); ++r) inst.ends[r] = inst.entries[r] + record.durations[r];
  const double shift = inst.start - record.start;
  const int64_t moved = shape.first - record.shape.first;
  // (a carried layout other than the record's: which elements a message carried is unknown)
  const bool elements_known = same_layout(shape.map, record.shape.map, true);
  log_->replay(record.messages, {shift, shape.round, shape.bucket, moved, elements_known}, sg4::Engine::get_clock());
}

// The data, reduced in rank order (an allreduce's or reduce-scatter's reduction on every
// rank; an all-gather's chunk j from rank j), as the algorithm leaves it up to its order.
void CollectiveReplay::reduce_data(Instance& inst) const {
  const Collective kind = inst.shape.algorithm->collective;
  if (kind == Collective::allgather) {
    const CarriedMap& map = inst.shape.map;
    for (int j = 0; j < ranks_; ++j) {
      const Chunk chunk = even_chunk(map.logical, ranks_, j);
      const size_t first = map.at(chunk.offset), count = map.at(chunk.offset + chunk.count) - first;
      const Buffer& from = *inst.buffers[static_cast<size_t>(j)];
      for (Buffer* to : inst.buffers)
        if (to != &from && count > 0)
          std::copy_n(from.data() + first * from.elem_bytes(), count * from.elem_bytes(), to->data() + first * to->elem_bytes());
    }
    return;
  }
  if (kind != Collective::allreduce && kind != Collective::reduce_scatter)
    throw std::logic_error("replay: only allreduce, reduce-scatter and allgather buckets are replayed");
  Buffer sum = *inst.buffers[0];
  for (size_t q = 1; q < inst.buffers.size(); ++q) op_.combine(sum.all(), inst.buffers[q]->all());
  for (Buffer* to : inst.buffers) copy_elements(to->all(), sum.all());
}

void CollectiveReplay::leave(int rank) {
  if (!enabled()) return;
  ++events_;
  const int64_t seq = entered_[static_cast<size_t>(rank)].seq;
  Instance& inst = instance(seq);
  if (inst.recording) inst.ends[static_cast<size_t>(rank)] = sg4::Engine::get_clock();
  if (++inst.left < ranks_) return;
  if (inst.recording) finish_record(inst, seq);
  live_.erase(seq);
}

// A collective simulated from an isolated start becomes a record if nothing else started
// before its last rank left (no rank entered or declared an entry into its next one
// before then) and its messages made steps of their own.
void CollectiveReplay::finish_record(Instance& inst, int64_t seq) {
  const double last_end = *std::max_element(inst.ends.begin(), inst.ends.end());
  LogCapture captured = log_->end_capture(sg4::Engine::get_clock());
  for (size_t r = 0; r < entered_.size(); ++r) {
    if (entered_[r].seq > seq && entered_[r].at < last_end) return;
    if (declared_[r].seq > seq && declared_[r].entry < last_end) return;
  }
  if (!captured.alone || inst.network_version != network_version_) return;  // (a fault changed the network meanwhile)
  auto record = std::make_unique<Record>();
  record->network_version = inst.network_version;
  record->shape = inst.shape;
  record->start = inst.start;
  for (size_t r = 0; r < inst.entries.size(); ++r) {
    record->offsets.push_back(inst.entries[r] - inst.start);
    record->durations.push_back(inst.ends[r] - inst.entries[r]);
  }
  record->messages = std::move(captured);
  records_.push_back(std::move(record));
}

}  // namespace collsim
