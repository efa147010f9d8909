#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_EVENT_TIME_WINDOWS_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_EVENT_TIME_WINDOWS_H_

// The reward engine's event-time logic, free of Kafka and of the buffer:
// SLI windows in, merged (service, group, deployment, window) aggregates out,
// plus where every partition may resume after a crash. Pure: processing time
// is an argument, so tests drive it with synthetic records and clocks.
//
// Windows. Tumbling event-time windows [s, s + window_ms) with s a multiple
// of window_ms. An SLI window [a, a + L) belongs to the window holding a; the
// caller has checked that L divides window_ms (SLI windows are aligned to
// their length, so they never straddle two windows). A record's event time
// is its SLI window's last millisecond a + L - 1: every request it counts
// happened by then, so the window [s, s + W) closes once the watermark says
// no SLI window ending at or before s + W is still to come — with lateness
// l, once an SLI window covering time past s + W + l has been read (not the
// first one *starting* past it, a whole SLI window later).
//
// Watermark. Per partition: the largest event time read minus lateness_ms.
// Overall: the minimum over the assigned partitions that are not idle; a
// partition is idle when it has read everything it is known to hold (its
// position has reached the end offset the caller last reported) and no
// record came for idle_ms of processing time. Requiring "caught up" as well
// as "quiet" means a partition that is merely slow (a broker down, a fetch
// retried) holds the watermark back instead of turning its pending records
// late, so what is late depends on the input, not on timing. When every
// partition is idle the watermark is the largest partition watermark (the
// stream is drained). A partition with no record yet and not idle holds the
// watermark at "no time". The watermark never goes back.
//
// Closing. A window closes (CloseReady) once the watermark is >= its end;
// all groups of one service close together, so a canary can be compared
// with its baseline. A record whose window has already closed is late
// (counted, sent to the late topic by the caller, never merged).
// Duplicates — the same (service, group, instance, SLI window start) read
// twice, e.g. after a producer retry — are dropped while their window is
// open (after it closed, a duplicate is reported as late).
//
// Restart contract (what the caller stores with every batch of rewards, in
// the same transaction, see Checkpoints()). Per partition p:
//   next_offset     the lowest offset of a record of p in a window not yet
//                   closed, or the position if there is none: everything
//                   below it is fully emitted. The consumer resumes here.
//   read_through    the position (every offset below it was read and its
//                   side effects — dead letter, late record — produced).
//   closed_through  the watermark at the last close: every window whose end
//                   is <= it has been emitted, in the same transaction.
// After a crash the partition is read again from next_offset. Records there
// are a mix of (a) records of windows still open at the checkpoint, which
// rebuild those windows exactly (all their records are >= next_offset), and
// (b) records of windows closed at the checkpoint, interleaved with (a);
// (b) are recognised by offset < read_through and window end <=
// closed_through and skipped silently (kReplayed), so a closed window is
// never re-emitted from part of its data and no late record or dead letter
// is produced twice. Offsets at or above read_through are new input. Until
// every restored partition has read up to its read_through again, the
// watermark is capped at their closed_through: at the checkpoint no window
// ending after it had closed, so none closes before the records it held
// are all back (even ones out of order by more than the lateness). A
// window emitted to Kafka whose checkpoint was not stored (crash between the
// two) is rebuilt from the same records and re-emitted identically: the
// keyed overwrite makes it count once.
//
// A checkpoint describes one log. A log's end offset never falls below what
// was read from it, so an end offset below the restored read_through means
// the topic was recreated under the group — typically a new embedded
// cluster, which keeps nothing, while the buffer holding the checkpoints
// survived (a resumed `canary run`). Its offsets say nothing about this
// log: the partition forgets the checkpoint and reads everything as new
// input, like a partition without one (the consumer, placed past the end,
// starts from the earliest record; placed inside the log, at an old
// next_offset at or below its end, it is moved to the start). Kept, it would
// cap the watermark at the old closed_through until this log had grown past the
// old read_through. The partition's next checkpoint replaces the stored one
// (PartitionCheckpoint::replaces_stored), although its offsets are lower
// than the buffer's forward-only offsets would otherwise accept: else a
// restart once this log had grown past the old read_through would resume
// at the old next_offset and skip, unseen, the records below it.
//
// Rebalances: the engine relies on eager rebalancing (librdkafka's default
// range/roundrobin assignors): on revocation the caller calls Reset() and
// every newly assigned partition restarts from its checkpoint.
//
// Thread-safety: none (one consumer thread owns it).

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reward_engine/sli/latency_sketch.h"

namespace phaseloop::reward_engine {

// "No event time yet".
inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

struct WindowOptions {
  int64_t window_ms = 60000;  // > 0
  int64_t lateness_ms = 0;    // >= 0
  int64_t idle_ms = 10000;    // >= 0
};

// What an end offset says of a partition's restored checkpoint.
enum class EndOffsetCheck {
  kSameLog,  // nothing new: the checkpoint's log, or forgotten already
  // Another log's, now forgotten; the consumer, placed past this log's
  // end, starts at its earliest record by itself.
  kOtherLog,
  // Another log's, now forgotten; the consumer was placed inside this log
  // (the old next_offset is not past its end), so it must be moved to the
  // log's start, or the records below that offset are never read.
  kOtherLogMoveToStart,
};

struct PartitionCheckpoint {
  int64_t next_offset = 0;
  int64_t read_through = 0;
  int64_t closed_through_ms = kNoTime;
  // Taken after the stored checkpoint was forgotten as another log's
  // (SetEndOffset): it replaces the stored one although its offsets are
  // lower. Stored checkpoints never carry it.
  bool replaces_stored = false;
  bool operator==(const PartitionCheckpoint& o) const {
    return next_offset == o.next_offset && read_through == o.read_through &&
           closed_through_ms == o.closed_through_ms &&
           replaces_stored == o.replaces_stored;
  }
};

// One valid SLI window record, decoded.
struct SliInput {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string service;
  std::string group;
  std::string instance;
  std::string deployment_id;
  std::string policy_version;
  int64_t sli_window_start_ms = 0;
  int64_t sli_window_length_ms = 1;  // > 0; event time = start + length - 1
  int64_t count = 0;
  int64_t error_count = 0;
  sli::LatencySketch sketch;  // with its exact statistics
  // The failures' latencies (SliWindow.error_sketch); empty without one.
  sli::LatencySketch error_sketch;
};

enum class Admission {
  kAccepted,   // merged into its open window
  kDuplicate,  // the same instance's SLI window was already merged
  kLate,       // its window had closed: send to the late topic
  kReplayed,   // read before a restart and its window was emitted: ignore
  kConflict,   // its deployment carries another policy_version in the window
};

struct AddResult {
  Admission admission = Admission::kAccepted;
  // Read before the last checkpoint (offset < read_through): its side
  // effects (dead letter, late record) were already produced.
  bool replayed = false;
};

// One merged (service, group, deployment) in one window.
struct GroupWindow {
  std::string group;
  std::string deployment_id;
  std::string policy_version;
  int64_t sli_windows = 0;
  int64_t error_count = 0;
  sli::LatencySketch sketch;
  // The latencies of the failures whose SLI windows carried them (some of
  // error_count).
  sli::LatencySketch error_sketch;
};

// Every group of one service in one closed window, groups ordered by
// (group, deployment_id).
struct ClosedWindow {
  std::string service;
  int64_t window_start_ms = 0;
  int64_t window_end_ms = 0;
  std::vector<GroupWindow> groups;
};

class EventTimeWindows {
 public:
  explicit EventTimeWindows(WindowOptions options);

  // Starts tracking `partition`, resuming from `restored` when given.
  void Assign(int32_t partition, std::optional<PartitionCheckpoint> restored,
              int64_t now_ms);
  // Forgets every partition and open window (all partitions revoked).
  void Reset();

  // Records that `offset` of `partition` was read but is not an SLI window
  // the engine can use (malformed, invalid, unknown service, ...). Returns
  // whether it is new input (false: read before the last checkpoint, its
  // dead letter was already produced). Unassigned partitions are assigned.
  bool Skip(int32_t partition, int64_t offset, int64_t now_ms);
  // Admits one valid record (see Admission). Unassigned partitions are
  // assigned.
  AddResult Add(SliInput input, int64_t now_ms);

  // The partition's end offset (high watermark) as last observed; whether
  // it shows the restored checkpoint was taken on another log, which is
  // then forgotten (see the restart contract).
  EndOffsetCheck SetEndOffset(int32_t partition, int64_t end_offset);

  // The current watermark (monotonic), kNoTime before there is one.
  int64_t Watermark(int64_t now_ms);
  // Closes and returns the windows whose end is <= the watermark, ordered
  // by (window_start_ms, service).
  std::vector<ClosedWindow> CloseReady(int64_t now_ms);
  // The caller's input is drained: it is about to stop (`rewards run
  // --exit-when-idle-ms`) or no record came for its idle timeout (`rewards
  // run --close-idle-ms`). Closes what CloseReady closes and, when every
  // partition has read everything it is known to hold, every window that
  // ended at least lateness_ms before `wall_clock_ms` (Unix ms, the clock
  // SLI event times are on): a record for such a window that arrives after
  // now is later than the lateness allows in processing time too. Without
  // this, the newest window would wait for an event of a later window that
  // may never come. The watermark moves to the newest end closed, so the
  // checkpoint's closed_through covers these windows (their records read
  // after a restart are late, as after any close); windows ending later stay
  // open and are rebuilt from the checkpoint on the next start. Unlike
  // CloseReady, what this closes depends on processing time and the wall
  // clock: a producer whose clock runs behind the engine's by more than the
  // lateness may see its records turned late.
  std::vector<ClosedWindow> CloseDrained(int64_t now_ms, int64_t wall_clock_ms);

  // What to store now, per partition that read something or was restored
  // (see the restart contract). Valid right after CloseReady: the windows it
  // returned must be stored in the same transaction.
  std::map<int32_t, PartitionCheckpoint> Checkpoints() const;
  // The last Checkpoints() are stored: a partition whose checkpoint was
  // forgotten no longer needs to replace the stored one.
  void CheckpointsStored();

  // Per assigned partition: end offset - position (-1 when the end is not
  // known).
  std::map<int32_t, int64_t> Lag() const;
  size_t open_windows() const { return windows_.size(); }
  const WindowOptions& options() const { return options_; }

 private:
  struct PartitionState {
    int64_t position = -1;       // next offset to read; -1 = none read yet
    int64_t restored_next = -1;  // checkpoint's next_offset, -1 = none
    int64_t replay_until = 0;    // checkpoint's read_through
    int64_t closed_floor_ms = kNoTime;
    int64_t max_event_ms = kNoTime;
    int64_t last_record_ms = 0;  // processing time
    int64_t end_offset = -1;     // -1 = unknown
    // The restored checkpoint was forgotten (SetEndOffset) and no
    // checkpoint taken since has been stored yet (CheckpointsStored).
    bool replaces_stored = false;
  };
  struct GroupKey {
    std::string group;
    std::string deployment_id;
    bool operator<(const GroupKey& o) const {
      return std::tie(group, deployment_id) <
             std::tie(o.group, o.deployment_id);
    }
  };
  struct OpenWindow {
    std::map<GroupKey, GroupWindow> groups;
    // (group, instance, SLI window start) already merged.
    std::set<std::tuple<std::string, std::string, int64_t>> seen;
    std::map<int32_t, int64_t> min_offset;  // per partition
  };
  using WindowKey = std::pair<int64_t, std::string>;  // (start, service)

  PartitionState& StateOf(int32_t partition, int64_t now_ms);
  // Moves the partition past `offset`; returns whether it was replayed.
  bool Advance(PartitionState& state, int64_t offset, int64_t now_ms);
  bool Idle(const PartitionState& state, int64_t now_ms) const;
  // Every partition has a known end offset and has read up to it.
  bool AllCaughtUp() const;
  // Closes the windows whose end is <= `watermark` (which the caller has
  // made the watermark).
  std::vector<ClosedWindow> CloseThrough(int64_t watermark);

  WindowOptions options_;
  std::map<int32_t, PartitionState> partitions_;
  std::map<WindowKey, OpenWindow> windows_;
  int64_t watermark_ = kNoTime;
  int64_t applied_watermark_ = kNoTime;  // at the last CloseReady
};

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_EVENT_TIME_WINDOWS_H_
