#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_INTERNAL_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_INTERNAL_H_

// Internals of SliRecorder shared by its two source files (recording in
// sli_recorder.cc, closing and flushing in sli_recorder_flush.cc).

#include <time.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "reward_engine/sli/sli_recorder.h"

namespace phaseloop::sli::recorder_internal {

// A slot's state word: (window id + 1) << 2 | tag. Window id -1 (state 0)
// means never used.
enum : uint64_t { kFree = 0, kIdle = 1, kWriting = 2, kClosing = 3 };
//   kFree:    no data (zeroed); the owning thread may claim it for a window.
//   kIdle:    holds data of the window; the owning thread may write it.
//   kWriting: the owning thread is writing it (between two instructions).
//   kClosing: the closer is reading and zeroing it.

inline constexpr uint64_t State(int64_t window, uint64_t tag) {
  return (static_cast<uint64_t>(window + 1) << 2) | tag;
}
inline constexpr int64_t WindowOf(uint64_t state) {
  return static_cast<int64_t>(state >> 2) - 1;
}
inline constexpr uint64_t TagOf(uint64_t state) { return state & 3; }

// Longest latency recorded (1e9 s = kMaxValue), latest event time (year
// 37648), and the window id that closes every window.
inline constexpr int64_t kMaxNanos = int64_t{1000000000} * 1000000000;
inline constexpr int64_t kMaxEventTimeMs = int64_t{1} << 50;
inline constexpr int64_t kCloseAll = int64_t{1} << 52;

// Increment by the only writer: a relaxed load and store, no locked
// instruction; concurrent readers see whole values.
inline void Bump(std::atomic<int64_t>& counter, int64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta,
                std::memory_order_relaxed);
}

inline int64_t Take(std::atomic<int64_t>& counter, int64_t reset) {
  const int64_t value = counter.load(std::memory_order_relaxed);
  counter.store(reset, std::memory_order_relaxed);
  return value;
}

inline int64_t ClockMs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// One window's counters in one shard. Written only by the shard's thread
// while it holds kWriting, read and zeroed only by the closer while it holds
// kClosing; the state word's acquire/release orders the two.
struct Slot {
  explicit Slot(int entries) : buckets(new std::atomic<int64_t>[entries]()) {}
  ~Slot() { delete[] error_buckets.load(); }
  std::atomic<uint64_t> state{State(-1, kFree)};
  std::atomic<int64_t> count{0};
  std::atomic<int64_t> sum_ns{0};
  std::atomic<int64_t> min_ns{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> max_ns{0};
  std::atomic<int64_t> errors{0};
  // [0]: latencies of 0 ns; [1 + i - min_index]: bucket i of the mapping.
  std::unique_ptr<std::atomic<int64_t>[]> buckets;
  // The failed requests' latencies, laid out as `buckets`: allocated by the
  // owning thread at the slot's first failure, before it claims the slot
  // (an allocation failure then leaves nothing held), published with a
  // release store, kept for later windows; read by the closer under
  // kClosing.
  std::atomic<std::atomic<int64_t>*> error_buckets{nullptr};
};

// One thread's counters (a thread at a time; handed over when it exits).
struct alignas(64) Shard {
  explicit Shard(int entries)
      : slots{Slot(entries), Slot(entries), Slot(entries), Slot(entries)} {}
  Slot slots[SliRecorder::kSlots];
  std::atomic<int64_t> late{0};
  std::atomic<int64_t> dropped{0};
  std::atomic<int64_t> invalid{0};
  // Owner-only cache of the last window, to skip the division.
  int64_t cached_start_ms = 0;
  int64_t cached_end_ms = 0;
  int64_t cached_window = 0;
  std::atomic<bool> in_use{false};
};
static_assert(SliRecorder::kSlots == 4, "Shard's constructor lists 4 slots");

struct ShardPool {
  std::mutex mu;
  std::vector<std::unique_ptr<Shard>> shards;  // guarded by mu; never shrinks
};

// A closing window merged over shards.
struct Accumulator {
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = std::numeric_limits<int64_t>::max();
  int64_t max_ns = 0;
  int64_t errors = 0;
  std::vector<int64_t> buckets;
  std::vector<int64_t> error_buckets;  // empty until a failure
};

}  // namespace phaseloop::sli::recorder_internal

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_RECORDER_INTERNAL_H_
