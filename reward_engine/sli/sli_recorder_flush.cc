// SliRecorder: closing windows, and the flusher (see sli_recorder.h).
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <utility>

#include "reward_engine/sli/sli_recorder.h"
#include "reward_engine/sli/sli_recorder_internal.h"

namespace phaseloop::sli {

using recorder_internal::kClosing;
using recorder_internal::kFree;
using recorder_internal::kWriting;
using recorder_internal::State;
using recorder_internal::TagOf;
using recorder_internal::Take;
using recorder_internal::WindowOf;

std::vector<v1::SliWindow> SliRecorder::CloseWindowsBefore(int64_t now_ms) {
  if (now_ms < 0) return {};
  return CloseBeforeWindow(std::min(now_ms, recorder_internal::kCloseAll) /
                           options_.window_length_ms);
}

std::vector<v1::SliWindow> SliRecorder::CloseAllWindows() {
  return CloseBeforeWindow(recorder_internal::kCloseAll);
}

std::vector<v1::SliWindow> SliRecorder::CloseBeforeWindow(int64_t target) {
  std::lock_guard<std::mutex> close_lock(close_mu_);
  if (target > closed_before_.load()) closed_before_.store(target);
  target = closed_before_.load();
  std::vector<Shard*> shards;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    for (const auto& shard : pool_->shards) shards.push_back(shard.get());
  }
  const int entries = mapping_.max_index() - mapping_.min_index() + 2;
  std::map<int64_t, Accumulator> closing;
  for (Shard* shard : shards) {
    for (Slot& slot : shard->slots) {
      for (;;) {
        uint64_t state = slot.state.load();
        const int64_t held = WindowOf(state);
        if (held < 0 || held >= target || TagOf(state) == kFree) break;
        if (TagOf(state) == kWriting) {  // for a few instructions
          std::this_thread::yield();
          continue;
        }
        if (!slot.state.compare_exchange_strong(state, State(held, kClosing),
                                                std::memory_order_acquire)) {
          continue;
        }
        Accumulator& acc = closing[held];
        if (acc.buckets.empty()) acc.buckets.assign(entries, 0);
        acc.count += Take(slot.count, 0);
        acc.sum_ns += Take(slot.sum_ns, 0);
        acc.min_ns = std::min(
            acc.min_ns, Take(slot.min_ns, std::numeric_limits<int64_t>::max()));
        acc.max_ns = std::max(acc.max_ns, Take(slot.max_ns, 0));
        const int64_t errors = Take(slot.errors, 0);
        acc.errors += errors;
        for (int k = 0; k < entries; ++k) {
          if (slot.buckets[k].load(std::memory_order_relaxed) != 0) {
            acc.buckets[k] += Take(slot.buckets[k], 0);
          }
        }
        std::atomic<int64_t>* error_buckets =
            slot.error_buckets.load(std::memory_order_acquire);
        if (errors > 0 && error_buckets != nullptr) {
          if (acc.error_buckets.empty()) acc.error_buckets.assign(entries, 0);
          for (int k = 0; k < entries; ++k) {
            if (error_buckets[k].load(std::memory_order_relaxed) != 0) {
              acc.error_buckets[k] += Take(error_buckets[k], 0);
            }
          }
        }
        slot.state.store(State(held, kFree), std::memory_order_release);
        break;
      }
    }
  }
  std::vector<v1::SliWindow> windows;
  for (const auto& [window, acc] : closing) {
    if (acc.count > 0) windows.push_back(ToWindow(window, acc));
  }
  windows_closed_ += static_cast<int64_t>(windows.size());
  return windows;
}

v1::SliWindow SliRecorder::ToWindow(int64_t window,
                                    const Accumulator& acc) const {
  v1::SliWindow w;
  w.set_service(options_.service);
  w.set_group(options_.group);
  w.set_instance(options_.instance);
  w.set_deployment_id(options_.deployment_id);
  w.set_policy_version(options_.policy_version);
  w.set_window_start_ms(window * options_.window_length_ms);
  w.set_window_length_ms(options_.window_length_ms);
  w.set_count(acc.count);
  w.set_sum_seconds(static_cast<double>(acc.sum_ns) * 1e-9);
  w.set_min_seconds(static_cast<double>(acc.min_ns) * 1e-9);
  w.set_max_seconds(static_cast<double>(acc.max_ns) * 1e-9);
  w.set_error_count(acc.errors);
  *w.mutable_sketch() = SketchOf(acc.buckets).ToProto();
  if (acc.errors > 0) {
    *w.mutable_error_sketch() = SketchOf(acc.error_buckets).ToProto();
  }
  return w;
}

LatencySketch SliRecorder::SketchOf(const std::vector<int64_t>& buckets) const {
  // The highest and lowest buckets first, so the sketch sizes its range
  // once. Indexes come from the mapping and counts are positive: no errors.
  LatencySketch sketch;
  const int n = static_cast<int>(buckets.size());
  std::vector<int> order;
  for (int k = n - 1; k >= 1; --k) {
    if (buckets[k] != 0) order.push_back(k);
  }
  if (order.size() > 1) std::swap(order[1], order.back());
  for (int k : order) {
    sketch.AddToBucket(mapping_.min_index() + k - 1, buckets[k]).IgnoreError();
  }
  if (buckets[0] != 0) sketch.Add(0, buckets[0]).IgnoreError();
  return sketch;
}

absl::Status SliRecorder::StartFlusher(SliSink* sink) {
  std::lock_guard<std::mutex> lock(flusher_mu_);
  if (flusher_.joinable()) {
    return absl::FailedPreconditionError("the SLI flusher is already running");
  }
  sink_ = sink;
  stop_ = false;
  flusher_ = std::thread([this] { FlusherLoop(); });
  return absl::OkStatus();
}

void SliRecorder::FlusherLoop() {
  const int64_t length = options_.window_length_ms;
  const int64_t grace = options_.grace_ms;
  std::unique_lock<std::mutex> lock(flusher_mu_);
  while (!stop_) {
    const int64_t now = recorder_internal::ClockMs(CLOCK_REALTIME);
    // The next time (now - grace) reaches a window end.
    const int64_t next = ((now - grace) / length + 1) * length + grace;
    flusher_cv_.wait_for(lock, std::chrono::milliseconds(next - now),
                         [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    Enqueue(
        CloseWindowsBefore(recorder_internal::ClockMs(CLOCK_REALTIME) - grace));
    PublishPending().IgnoreError();  // counted; retried at the next flush
    lock.lock();
  }
}

void SliRecorder::Enqueue(std::vector<v1::SliWindow> windows) {
  for (v1::SliWindow& w : windows) pending_.push_back(std::move(w));
  while (pending_.size() > static_cast<size_t>(options_.max_pending_windows)) {
    pending_.pop_front();
    ++windows_dropped_;
  }
  windows_pending_ = static_cast<int64_t>(pending_.size());
}

absl::Status SliRecorder::PublishPending() {
  absl::Status status;
  while (!pending_.empty()) {
    status = sink_->Publish(pending_.front());
    if (!status.ok()) {
      ++publish_failures_;
      break;
    }
    pending_.pop_front();
    ++windows_published_;
  }
  windows_pending_ = static_cast<int64_t>(pending_.size());
  return status;
}

absl::Status SliRecorder::StopFlusher() {
  {
    std::lock_guard<std::mutex> lock(flusher_mu_);
    if (!flusher_.joinable()) {
      return absl::FailedPreconditionError("the SLI flusher is not running");
    }
    stop_ = true;
  }
  flusher_cv_.notify_all();
  flusher_.join();
  Enqueue(CloseAllWindows());
  absl::Status first;
  for (const v1::SliWindow& w : pending_) {
    absl::Status status = sink_->Publish(w);
    if (status.ok()) {
      ++windows_published_;
    } else {
      ++publish_failures_;
      ++windows_dropped_;
      if (first.ok()) first = status;
    }
  }
  pending_.clear();
  windows_pending_ = 0;
  std::lock_guard<std::mutex> lock(flusher_mu_);
  sink_ = nullptr;
  return first;
}

}  // namespace phaseloop::sli
