#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_H_

// SliRecorder: the SLI library a service links. Request handlers record each
// request's latency (and whether it failed); the recorder keeps exact count,
// sum, min, max, error count, a latency sketch (latency_sketch.h) and one of
// the failed requests' latencies (SliWindow.error_sketch) per
// event-time tumbling window [k * L, (k + 1) * L) of Unix epoch
// milliseconds (L = window_length_ms, default 10 s), and closes windows into
// v1::SliWindow protos, either on demand (CloseWindowsBefore) or from a
// background flusher that publishes them to an SliSink.
//
// Threading contract.
//  - Record* may be called from any number of threads concurrently, and
//    concurrently with everything else except destruction. The hot path takes
//    no lock and never waits (but for allocating a slot's failure buckets,
//    once per slot, at its first failure, before claiming it): each thread
//    writes its own shard (per-thread
//    counters, relaxed atomics), and claims the shard's slot for the window
//    with one uncontended compare-and-swap, released with a store. A thread's
//    first Record takes a mutex once to get its shard; a shard is handed to
//    a new thread when its thread exits.
//  - CloseWindowsBefore / CloseAllWindows may be called from any thread;
//    they serialize on a mutex. Closing window W first advances the
//    watermark, then takes every shard's slot for W (waiting, by yielding,
//    only for a Record that is writing that very slot at that moment).
//    Every valid record is counted exactly once: in the window of its event
//    time if that window was still open when the record claimed its slot,
//    otherwise in stats().late_records (or dropped_records, below). Nothing
//    is lost at window boundaries.
//  - StartFlusher / StopFlusher belong to one owner (not concurrently with
//    each other); stats() may be called from any thread.
//  - Each shard holds kSlots windows; a record for a window kSlots or more
//    windows away from an unclosed one of the same thread cannot be stored
//    and is counted in dropped_records (close windows at least every
//    kSlots - 1 window lengths; the flusher closes each one on time).
//
// Accuracy: the recorder's buckets are the sketch's (relative accuracy
// 0.005) over its whole domain [1 ns, 1e9 s], so windows are exactly the
// sketch of the recorded latencies at nanosecond resolution (sums exact in
// integer nanoseconds). Memory: about 130 KB per recording thread, twice
// that once it has recorded failures in each of its slots.
//
// Event time: RecordMicros/RecordSeconds read CLOCK_REALTIME_COARSE (cheap,
// a few ms of resolution); RecordNanosAt takes the event time explicitly.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "phaseloop/v1/sli.pb.h"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/sli/sli_sink.h"

namespace phaseloop::sli {

namespace recorder_internal {
struct Slot;
struct Shard;
struct ShardPool;
struct Accumulator;
}  // namespace recorder_internal

struct SliRecorderOptions {
  // Copied into every window; all required (see sli_window.h).
  std::string service;
  std::string group;
  std::string instance;
  std::string deployment_id;
  std::string policy_version;
  int64_t window_length_ms = 10000;
  // The flusher closes a window once the wall clock is this far past its
  // end (room for requests stamped just before the end to be recorded).
  int64_t grace_ms = 1000;
  // Windows the sink refused are retried at the next flush; beyond this
  // many, the oldest are dropped (stats().windows_dropped).
  int max_pending_windows = 360;
};

struct SliRecorderStats {
  int64_t late_records = 0;     // event time in an already closed window
  int64_t dropped_records = 0;  // no free slot in the thread's ring
  int64_t invalid_records = 0;  // negative, NaN, > 1e9 s, or time < 0
  int64_t windows_closed = 0;
  int64_t windows_published = 0;
  int64_t publish_failures = 0;  // Publish calls that failed (then retried)
  int64_t windows_dropped = 0;   // never published: queue full, or StopFlusher
  int64_t windows_pending = 0;   // closed, waiting for a retry
};

class SliRecorder {
 public:
  // Windows a thread can hold unclosed at once.
  static constexpr int kSlots = 4;

  // InvalidArgument for missing ids or a window length outside
  // [1, kMaxWindowLengthMs].
  static absl::StatusOr<std::unique_ptr<SliRecorder>> Create(
      SliRecorderOptions options);
  // Stops the flusher if running (publishing every window, see StopFlusher).
  // No Record may run concurrently with or after destruction.
  ~SliRecorder();
  SliRecorder(const SliRecorder&) = delete;
  SliRecorder& operator=(const SliRecorder&) = delete;

  // Hot path: one request's latency; event time = now.
  void RecordMicros(int64_t latency_us, bool error) {
    constexpr int64_t kMaxMicros = int64_t{1000000000} * 1000000;  // 1e9 s
    RecordNanosAt(CoarseNowMs(),
                  latency_us >= 0 && latency_us <= kMaxMicros
                      ? latency_us * 1000
                      : -1,  // invalid
                  error);
  }
  void RecordSeconds(double latency_seconds, bool error);
  // Hot path with an explicit event time (Unix epoch ms).
  void RecordNanosAt(int64_t event_time_ms, int64_t latency_ns, bool error);

  // Closes every window that ends at or before `now_ms` and returns those
  // that hold records, oldest first. Records for them that arrive later are
  // late. The watermark never moves back: an older `now_ms` closes nothing.
  std::vector<v1::SliWindow> CloseWindowsBefore(int64_t now_ms);
  // Closes every window, including the current one (shutdown).
  std::vector<v1::SliWindow> CloseAllWindows();

  // Starts a thread that, each time the wall clock passes a window's end by
  // grace_ms, closes the windows before (now - grace_ms) and publishes them
  // to `sink` (which must outlive StopFlusher). FailedPrecondition if
  // already running.
  absl::Status StartFlusher(SliSink* sink);
  // Stops the flusher thread, closes all windows and publishes them with
  // the pending ones (one attempt each). Returns the first publish error;
  // windows still unpublished are counted in windows_dropped.
  absl::Status StopFlusher();

  SliRecorderStats stats() const;
  const SliRecorderOptions& options() const { return options_; }

  static int64_t CoarseNowMs();

 private:
  using Slot = recorder_internal::Slot;
  using Shard = recorder_internal::Shard;
  using ShardPool = recorder_internal::ShardPool;
  using Accumulator = recorder_internal::Accumulator;

  explicit SliRecorder(SliRecorderOptions options);
  Shard* ShardOfThisThread();
  Shard* AcquireShardSlow();
  // The slot for window `window` of `shard`, claimed for writing; nullptr
  // when the record is late or dropped (counted).
  Slot* ClaimSlow(Shard* shard, Slot* slot, int64_t window, uint64_t seen);
  // Closes the windows with id < `window` (id = start / length).
  std::vector<v1::SliWindow> CloseBeforeWindow(int64_t window);
  v1::SliWindow ToWindow(int64_t window, const Accumulator& acc) const;
  // A sketch of counts laid out as a slot's buckets.
  LatencySketch SketchOf(const std::vector<int64_t>& buckets) const;
  void FlusherLoop();
  // Queues closed windows for publishing, dropping the oldest beyond
  // max_pending_windows.
  void Enqueue(std::vector<v1::SliWindow> windows);
  // Publishes pending_ in order, stopping at the first failure.
  absl::Status PublishPending();

  const SliRecorderOptions options_;
  const LogMapping mapping_;
  const uint64_t id_;  // distinguishes recorders in the thread-local cache
  std::shared_ptr<ShardPool> pool_;
  // Windows with id < closed_before_ are closed.
  std::atomic<int64_t> closed_before_{0};

  std::mutex close_mu_;  // serializes closing
  std::atomic<int64_t> windows_closed_{0};

  std::mutex flusher_mu_;  // guards stop_, sink_ and flusher_
  std::condition_variable flusher_cv_;
  bool stop_ = false;
  SliSink* sink_ = nullptr;
  std::thread flusher_;
  // Closed windows not yet published: touched only by the flusher thread,
  // and by StopFlusher after joining it.
  std::deque<v1::SliWindow> pending_;
  std::atomic<int64_t> windows_pending_{0};
  std::atomic<int64_t> windows_published_{0};
  std::atomic<int64_t> publish_failures_{0};
  std::atomic<int64_t> windows_dropped_{0};
};

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_H_
