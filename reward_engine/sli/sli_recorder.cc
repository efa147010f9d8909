#include "reward_engine/sli/sli_recorder.h"

#include <algorithm>
#include <utility>

#include "absl/base/optimization.h"
#include "reward_engine/sli/sli_recorder_internal.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::sli {
namespace recorder_internal {
namespace {

std::atomic<uint64_t> next_recorder_id{1};

// Shards of this thread, by recorder; released when the thread exits.
struct ThreadCache {
  struct Entry {
    uint64_t recorder_id;
    Shard* shard;
    std::weak_ptr<ShardPool> pool;
  };
  std::vector<Entry> entries;
  ~ThreadCache() {
    for (const Entry& e : entries) {
      if (auto pool = e.pool.lock()) {
        e.shard->in_use.store(false, std::memory_order_release);
      }
    }
  }
};

// The fast path reads only these trivially destructible thread-locals.
thread_local uint64_t tls_last_recorder = 0;
thread_local Shard* tls_last_shard = nullptr;
thread_local ThreadCache tls_cache;

}  // namespace
}  // namespace recorder_internal

using recorder_internal::Bump;
using recorder_internal::kFree;
using recorder_internal::kIdle;
using recorder_internal::kWriting;
using recorder_internal::State;
using recorder_internal::TagOf;
using recorder_internal::WindowOf;

absl::StatusOr<std::unique_ptr<SliRecorder>> SliRecorder::Create(
    SliRecorderOptions options) {
  v1::SliWindow ids;
  ids.set_service(options.service);
  ids.set_group(options.group);
  ids.set_instance(options.instance);
  ids.set_deployment_id(options.deployment_id);
  ids.set_policy_version(options.policy_version);
  ids.set_window_length_ms(options.window_length_ms);
  ids.mutable_sketch()->set_relative_accuracy(kDefaultRelativeAccuracy);
  absl::Status valid = ValidateSliWindow(ids);
  if (!valid.ok()) return valid;
  if (options.grace_ms < 0 || options.max_pending_windows < 1) {
    return absl::InvalidArgumentError(
        "grace_ms must be >= 0 and max_pending_windows >= 1");
  }
  return std::unique_ptr<SliRecorder>(new SliRecorder(std::move(options)));
}

SliRecorder::SliRecorder(SliRecorderOptions options)
    : options_(std::move(options)),
      mapping_(kDefaultRelativeAccuracy),
      id_(recorder_internal::next_recorder_id.fetch_add(1)),
      pool_(std::make_shared<ShardPool>()) {}

SliRecorder::~SliRecorder() {
  bool running;
  {
    std::lock_guard<std::mutex> lock(flusher_mu_);
    running = flusher_.joinable();
  }
  if (running) StopFlusher().IgnoreError();  // counted in stats
}

int64_t SliRecorder::CoarseNowMs() {
  return recorder_internal::ClockMs(CLOCK_REALTIME_COARSE);
}

SliRecorder::Shard* SliRecorder::ShardOfThisThread() {
  if (ABSL_PREDICT_TRUE(recorder_internal::tls_last_recorder == id_)) {
    return recorder_internal::tls_last_shard;
  }
  return AcquireShardSlow();
}

SliRecorder::Shard* SliRecorder::AcquireShardSlow() {
  auto& entries = recorder_internal::tls_cache.entries;
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const auto& e) { return e.pool.expired(); }),
                entries.end());
  Shard* shard = nullptr;
  for (const auto& e : entries) {
    if (e.recorder_id == id_) shard = e.shard;
  }
  if (shard == nullptr) {
    std::lock_guard<std::mutex> lock(pool_->mu);
    for (const auto& candidate : pool_->shards) {
      bool free = false;
      if (candidate->in_use.compare_exchange_strong(
              free, true, std::memory_order_acquire)) {
        shard = candidate.get();
        break;
      }
    }
    if (shard == nullptr) {
      const int entries_per_slot =
          mapping_.max_index() - mapping_.min_index() + 2;
      pool_->shards.push_back(std::make_unique<Shard>(entries_per_slot));
      shard = pool_->shards.back().get();
      shard->in_use.store(true, std::memory_order_relaxed);
    }
    entries.push_back({id_, shard, pool_});
  }
  recorder_internal::tls_last_recorder = id_;
  recorder_internal::tls_last_shard = shard;
  return shard;
}

void SliRecorder::RecordSeconds(double latency_seconds, bool error) {
  const int64_t ns = latency_seconds >= 0 && latency_seconds <= kMaxValue
                         ? static_cast<int64_t>(latency_seconds * 1e9 + 0.5)
                         : -1;
  RecordNanosAt(CoarseNowMs(), ns, error);
}

void SliRecorder::RecordNanosAt(int64_t event_time_ms, int64_t latency_ns,
                                bool error) {
  Shard* shard = ShardOfThisThread();
  if (ABSL_PREDICT_FALSE(latency_ns < 0 ||
                         latency_ns > recorder_internal::kMaxNanos ||
                         event_time_ms < 0 ||
                         event_time_ms > recorder_internal::kMaxEventTimeMs)) {
    Bump(shard->invalid, 1);
    return;
  }
  int64_t window = shard->cached_window;
  if (ABSL_PREDICT_FALSE(event_time_ms < shard->cached_start_ms ||
                         event_time_ms >= shard->cached_end_ms)) {
    window = event_time_ms / options_.window_length_ms;
    shard->cached_window = window;
    shard->cached_start_ms = window * options_.window_length_ms;
    shard->cached_end_ms = shard->cached_start_ms + options_.window_length_ms;
  }
  Slot* slot = &shard->slots[window % kSlots];
  if (ABSL_PREDICT_FALSE(error) &&
      slot->error_buckets.load(std::memory_order_relaxed) == nullptr) {
    // Once per slot and thread, before claiming it: only its owner stores.
    slot->error_buckets.store(
        new std::atomic<int64_t>[mapping_.max_index() - mapping_.min_index() +
                                 2](),
        std::memory_order_release);
  }
  uint64_t seen = State(window, kIdle);
  if (ABSL_PREDICT_FALSE(!slot->state.compare_exchange_strong(
          seen, State(window, kWriting), std::memory_order_acquire,
          std::memory_order_relaxed))) {
    slot = ClaimSlow(shard, slot, window, seen);
    if (slot == nullptr) return;
  }
  int entry = 0;
  if (latency_ns > 0) {
    entry =
        std::min(1 + mapping_.Index(static_cast<double>(latency_ns) * 1e-9) -
                     mapping_.min_index(),
                 mapping_.max_index() - mapping_.min_index() + 1);
  }
  Bump(slot->buckets[entry], 1);
  Bump(slot->count, 1);
  Bump(slot->sum_ns, latency_ns);
  if (latency_ns < slot->min_ns.load(std::memory_order_relaxed)) {
    slot->min_ns.store(latency_ns, std::memory_order_relaxed);
  }
  if (latency_ns > slot->max_ns.load(std::memory_order_relaxed)) {
    slot->max_ns.store(latency_ns, std::memory_order_relaxed);
  }
  if (error) {
    Bump(slot->errors, 1);
    Bump(slot->error_buckets.load(std::memory_order_relaxed)[entry], 1);
  }
  slot->state.store(State(window, kIdle), std::memory_order_release);
}

SliRecorder::Slot* SliRecorder::ClaimSlow(Shard* shard, Slot* slot,
                                          int64_t window, uint64_t seen) {
  const int64_t held = WindowOf(seen);
  if (held >= window || TagOf(seen) != kFree) {
    // The window was closed (its slot freed, or reused by a later one), or
    // the slot still holds an unclosed window kSlots away.
    if (window < closed_before_.load()) {
      Bump(shard->late, 1);
    } else {
      Bump(shard->dropped, 1);
    }
    return nullptr;
  }
  // A free slot: only this thread changes it. Claim, then check the
  // watermark; both sequentially consistent, against the closer's store of
  // the watermark followed by its loads of slot states: either the closer
  // sees the claim (and waits for it) or this thread sees the watermark.
  slot->state.store(State(window, kWriting));
  if (window < closed_before_.load()) {
    slot->state.store(State(window, kFree), std::memory_order_release);
    Bump(shard->late, 1);
    return nullptr;
  }
  return slot;
}

SliRecorderStats SliRecorder::stats() const {
  SliRecorderStats stats;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    for (const auto& shard : pool_->shards) {
      stats.late_records += shard->late.load(std::memory_order_relaxed);
      stats.dropped_records += shard->dropped.load(std::memory_order_relaxed);
      stats.invalid_records += shard->invalid.load(std::memory_order_relaxed);
    }
  }
  stats.windows_closed = windows_closed_;
  stats.windows_published = windows_published_;
  stats.publish_failures = publish_failures_;
  stats.windows_dropped = windows_dropped_;
  stats.windows_pending = windows_pending_;
  return stats;
}

}  // namespace phaseloop::sli
