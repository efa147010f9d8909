#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_METRICS_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_METRICS_H_

// The reward engine's Prometheus series (phaseloop_rewards_*), counted by
// reward_engine.cc as it consumes, closes windows and delivers.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "common/metrics/metrics_registry.h"
#include "reward_engine/engine/event_time_windows.h"

namespace phaseloop::reward_engine {

// The engine's /metrics series (all optional: no registry, no metrics).
class EngineMetrics {
 public:
  explicit EngineMetrics(metrics::MetricsRegistry* registry)
      : registry_(registry) {
    if (registry == nullptr) return;
    records_ = &registry->AddCounter("phaseloop_rewards_records_total",
                                     "SLI records consumed");
    merged_ =
        &registry->AddCounter("phaseloop_rewards_sli_windows_merged_total",
                              "SLI windows merged into an event-time window");
    duplicates_ = &registry->AddCounter(
        "phaseloop_rewards_duplicates_dropped_total",
        "SLI windows dropped as duplicates of one already merged");
    late_ = &registry->AddCounter(
        "phaseloop_rewards_late_events_total",
        "SLI windows whose window had closed (sent to the late topic)");
    windows_closed_ =
        &registry->AddCounter("phaseloop_rewards_windows_closed_total",
                              "(service, window)s closed by the watermark");
    rewards_ = &registry->AddCounter("phaseloop_rewards_emitted_total",
                                     "Rewards produced and stored");
    watermark_ = &registry->AddGauge("phaseloop_rewards_watermark_ms",
                                     "Event-time watermark (ms since epoch)");
    open_windows_ = &registry->AddGauge("phaseloop_rewards_open_windows",
                                        "Event-time windows not closed yet");
    assigned_ = &registry->AddGauge(
        "phaseloop_rewards_assigned_partitions",
        "SLI partitions this engine reads (its share of the consumer group)");
  }
  void Assigned(size_t partitions) {
    if (assigned_ != nullptr) assigned_->Set(static_cast<double>(partitions));
  }
  void Records() { Inc(records_); }
  void Merged() { Inc(merged_); }
  void Duplicate() { Inc(duplicates_); }
  void Late() { Inc(late_); }
  void WindowsClosed(size_t n) { Inc(windows_closed_, n); }
  void Rewards(size_t n) { Inc(rewards_, n); }
  void RecordsLost(int32_t partition, int64_t count) {
    if (registry_ == nullptr) return;
    registry_
        ->AddCounter("phaseloop_rewards_records_lost_total",
                     "SLI records deleted from Kafka before the engine read "
                     "them (retention)",
                     {{"partition", std::to_string(partition)}})
        .Increment(static_cast<double>(count));
  }
  void DeadLetter(const std::string& reason) {
    if (registry_ == nullptr) return;
    const std::string klass = reason.substr(0, reason.find(':'));
    registry_
        ->AddCounter("phaseloop_rewards_dead_letters_total",
                     "Input records sent to the dead-letter topic",
                     {{"reason", klass}})
        .Increment();
  }
  void State(int64_t watermark, size_t open,
             const std::map<int32_t, int64_t>& lag) {
    if (registry_ == nullptr) return;
    if (watermark != kNoTime) watermark_->Set(static_cast<double>(watermark));
    open_windows_->Set(static_cast<double>(open));
    for (const auto& [partition, records] : lag) {
      if (records < 0) continue;
      registry_
          ->AddGauge("phaseloop_rewards_consumer_lag",
                     "Records in the partition not read yet",
                     {{"partition", std::to_string(partition)}})
          .Set(static_cast<double>(records));
    }
  }

 private:
  static void Inc(metrics::Counter* c, size_t n = 1) {
    if (c != nullptr) c->Increment(static_cast<double>(n));
  }
  metrics::MetricsRegistry* registry_;
  metrics::Counter* records_ = nullptr;
  metrics::Counter* merged_ = nullptr;
  metrics::Counter* duplicates_ = nullptr;
  metrics::Counter* late_ = nullptr;
  metrics::Counter* windows_closed_ = nullptr;
  metrics::Counter* rewards_ = nullptr;
  metrics::Gauge* watermark_ = nullptr;
  metrics::Gauge* open_windows_ = nullptr;
  metrics::Gauge* assigned_ = nullptr;
};

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_METRICS_H_
