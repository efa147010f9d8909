#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_RUN_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_RUN_H_
// The reward engine's run, private to reward_engine.cc (the input side:
// consuming, windowing, end offsets, the loop) and engine_outputs.cc (the
// output side: rewards, late windows, dead letters and budgets to Kafka,
// checkpoints to the buffer, progress). RunRewardEngine is the interface.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/consumer.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/end_offset_probe.h"
#include "common/kafka/producer.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/engine_metrics.h"
#include "reward_engine/engine/event_time_windows.h"
#include "reward_engine/engine/reward_engine.h"
#include "reward_engine/engine/sli_input.h"
#include "reward_engine/slo/budget_publisher.h"
#include "reward_engine/slo/error_budget.h"

namespace phaseloop::reward_engine::engine_run {

using Clock = std::chrono::steady_clock;

// Processing time (steady clock, ms).
int64_t NowMs();
// Unix ms: the clock SLI windows' event times are on.
int64_t WallClockMs();

class Engine {
 public:
  Engine(replay_buffer::ReplayStore& store, const EngineOptions& options,
         const std::atomic<bool>* stop)
      : store_(store),
        options_(options),
        stop_(stop),
        thresholds_(ThresholdsOf(options.slos)),
        windows_(options.windows),
        tracker_(options.slos),
        metrics_(options.metrics) {}

  // Seed budgets, warm the producer, then consume -> emit -> store until
  // stopped, idle or failed (the steps below, in that order).
  absl::StatusOr<EngineStats> Run();

 private:
  absl::Status CheckOptions() const;
  // The error-budget tracker from phaseloop.rewards read to its end, so a
  // restarted engine publishes the budgets an uninterrupted one would.
  absl::Status SeedBudgetHistory();
  // The producer of rewards, late windows, dead letters and budgets, with
  // the output topics' metadata loaded; and the end-offset probe.
  absl::Status StartOutputs();
  // A consumer-group member on the SLI topic that resumes each assigned
  // partition from the checkpoints stored in the buffer.
  absl::StatusOr<std::unique_ptr<kafka::Consumer>> StartConsumer();
  // Polls, windows, closes and commits until stopped, idle or failed; on
  // stop stores the progress made since the last checkpoint.
  absl::Status ConsumeUntilDone(kafka::Consumer& consumer);
  // The probe's end offsets to the windows; says so when one shows a
  // restored checkpoint was taken on another log (the topic recreated).
  // Whether it moved the consumer of some partition to the log's start.
  absl::StatusOr<bool> ApplyEndOffsets(kafka::Consumer& consumer);
  bool Stopping() const { return stop_ != nullptr && stop_->load(); }
  absl::Status Produce(const std::string& topic, const std::string& key,
                       const std::string& value);
  void Handle(const kafka::ConsumedMessage& m, int64_t now_ms);
  void DeadLetter(const kafka::ConsumedMessage& m, const std::string& reason);
  // Emits `closed`, waits for Kafka, stores rewards + checkpoints.
  absl::Status Commit(std::vector<ClosedWindow> closed, int64_t now_ms);
  // FailedPrecondition when the buffer holds one of `rewards`' ids for a
  // window of another length (ReplayStore::Write refuses it too).
  absl::Status FitsStoredWindows(const std::vector<v1::FinalReward>& rewards);
  // Flushes until every queued record is delivered (re-producing failures).
  absl::Status Deliver();
  void Progress(bool force);
  // Lost SLI records: counted, logged, recorded (lost_records_log and a
  // dead letter).
  void RecordsLost(const kafka::RecordsLost& lost, const absl::Status& status);
  // Keeps what Kafka has not acknowledged in the spool (if any).
  absl::Status KeepUndelivered(std::chrono::milliseconds timeout);
  std::ostream& Log() {
    return options_.progress != nullptr ? *options_.progress : std::cerr;
  }

  replay_buffer::ReplayStore& store_;
  const EngineOptions& options_;
  const std::atomic<bool>* stop_;
  SloThresholds thresholds_;
  EventTimeWindows windows_;
  slo::ErrorBudgetTracker tracker_;
  EngineMetrics metrics_;
  std::unique_ptr<kafka::Producer> producer_;
  std::optional<kafka::DeliverySpool> spool_;
  std::unique_ptr<slo::BudgetPublisher> budget_;
  std::unique_ptr<kafka::EndOffsetProbe> probe_;
  EngineStats stats_;
  bool dirty_ = false;     // records read since the last stored checkpoint
  bool assigned_ = false;  // SLI partitions assigned (rebalance callbacks)
  int64_t newest_closed_end_ms_ = kNoTime;
  Clock::time_point last_progress_ = Clock::now();
};

}  // namespace phaseloop::reward_engine::engine_run

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_RUN_H_
