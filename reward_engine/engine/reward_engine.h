#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_ENGINE_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_ENGINE_H_

// The reward engine's Kafka/buffer loop (`phaseloop rewards run`): a
// consumer-group member on phaseloop.sli that turns SLI windows into
// rewards, effectively once. The event-time logic is EventTimeWindows
// (event_time_windows.h, which documents the restart contract), the
// arithmetic is ComputeRewards (reward_calculator.h); this loop only moves
// records:
//
//   poll one record -> decode (sli_input.h): dead letter, or
//     EventTimeWindows::Add: merged / duplicate (dropped) / late (to
//     phaseloop.rewards.late) / replayed (ignored) / conflict (dead letter)
//   -> CloseReady: for each closed window, Rewards to phaseloop.rewards
//     (key service/group/deployment_id/window_start_ms), error-budget statuses
//     to phaseloop.budget
//   -> Flush the producer until every record is acknowledged (failed ones
//     are produced again: keyed, so a duplicate overwrites)
//   -> one replay-buffer transaction: the FinalRewards of those windows and
//     the partitions' checkpoints (engine_checkpoint.h).
// Kafka first, buffer second: a crash between the two replays the windows,
// which are re-emitted byte-identical. Progress without closed windows
// (dead letters, late records) is checkpointed every checkpoint_interval.
//
// Nothing produced is dropped: with a spool_dir, records Kafka has not
// acknowledged when the engine stops (or fails) are kept there
// (common/kafka/delivery_spool.h) and produced again, first, at the next
// start; the checkpoint is then stored, since the outputs are durable on
// disk. Without one, the windows are replayed from the SLI topic instead.
// SLI records deleted before the engine read them are counted, logged and
// recorded as a dead-letter entry (a line in lost_records_log and a
// DeadLetter with reason "lost: ..." on the dead-letter topic).
//
// Side topics (late, dead letters, budget) are at-least-once: a crash after
// producing one and before its checkpoint produces it again.
//
// Error budget: the tracker lives in memory and is fed every closed window
// (ErrorBudgetTracker::Observe is idempotent per window). At start-up it is
// seeded from the rewards topic, read from the beginning to its end without
// joining a group (budget_history.h: every Reward carries its good and total
// counts), so a restarted engine publishes the budgets an uninterrupted one
// would.
//
// Start-up, before consuming: the history above, then the producer's
// connection and the output topics' metadata (Producer::LoadTopicMetadata),
// so the first close does not pay them.
//
// Scale-out: engines in one consumer group split phaseloop.sli's
// partitions. SLI windows are keyed by service (kafka::SliKey), so every
// group of a service is in one partition and read by one engine, which
// compares canary with baseline.
//
// Threading: RunRewardEngine runs on the calling thread; `stop` may be set
// from any thread or a signal handler.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/topics.h"
#include "common/metrics/metrics_registry.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/event_time_windows.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::reward_engine {

struct EngineOptions {
  std::string bootstrap_servers;
  std::string group_id = "phaseloop-rewards";
  std::string sli_topic = std::string(kafka::kSliTopic);
  std::string rewards_topic = std::string(kafka::kRewardsTopic);
  std::string late_topic = std::string(kafka::kRewardsLateTopic);
  std::string dead_letter_topic = std::string(kafka::kDeadLetterTopic);
  std::string budget_topic = std::string(kafka::kBudgetTopic);
  WindowOptions windows;
  // The SLOs: reward thresholds (unknown services are dead letters) and the
  // error budgets. Must not be empty.
  std::vector<slo::Slo> slos;
  // Return after this long without a record once partitions are assigned
  // (0: run until *stop).
  std::chrono::milliseconds exit_when_idle{0};
  // On that return, the input is drained: also close the windows that
  // ended at least lateness before the wall clock
  // (EventTimeWindows::CloseDrained), so a finished stream's last windows
  // give their rewards. Stopping through *stop never does (a stopped engine
  // may be restarted to go on with the same windows).
  bool close_drained_windows = true;
  // After this long without a record, with every partition caught up, the
  // windows that ended at least lateness before the wall clock close
  // (EventTimeWindows::CloseDrained) without waiting for a later window's
  // data: a service's newest window gives its rewards about lateness after
  // its end. 0: never (only the watermark closes windows while running).
  std::chrono::milliseconds close_idle_after{2000};
  std::chrono::milliseconds checkpoint_interval{1000};
  // Seed the error budgets from rewards_topic at start-up (budget_history.h);
  // failing to read it within budget_history_timeout fails the start.
  bool seed_budget_history = true;
  std::chrono::milliseconds budget_history_timeout{60000};
  std::chrono::milliseconds end_offset_interval{500};
  std::map<std::string, std::string> consumer_config;
  std::map<std::string, std::string> producer_config;
  // Records not acknowledged at stop are kept here and retried at the next
  // start (kafka::SpoolDirPath(state, "rewards")); "": no spool.
  std::string spool_dir;
  // Lost SLI records are recorded here (kafka::LostRecordsLogPath); "": not.
  std::string lost_records_log;
  // Optional: counters and gauges are added to it (must outlive the run).
  metrics::MetricsRegistry* metrics = nullptr;
  // Optional: a progress line every progress_interval.
  std::ostream* progress = nullptr;
  std::chrono::milliseconds progress_interval{10000};
};

struct EngineStats {
  int64_t records = 0;
  int64_t merged = 0;  // SLI windows merged into a window
  int64_t duplicates = 0;
  int64_t late = 0;
  int64_t replayed = 0;  // read again after a restart, already emitted
  int64_t dead_letters = 0;
  int64_t windows_closed = 0;
  int64_t rewards = 0;
  int64_t empty_groups = 0;
  int64_t budget_statuses = 0;
  int64_t transactions = 0;
  int64_t redelivered = 0;  // records produced again after a failed delivery
  int64_t watermark_ms = kNoTime;
  int64_t history_windows = 0;  // budget observations seeded at start-up
  // SLI records deleted from Kafka before the engine read them (retention;
  // common/kafka/consumer.h): counted here and in
  // phaseloop_rewards_records_lost_total, each gap logged; the engine goes on.
  int64_t records_lost = 0;
  // Spooled records of an earlier run delivered at start-up, and records
  // this run left in the spool (Kafka had not acknowledged them).
  int64_t spool_delivered = 0;
  int64_t kept_for_retry = 0;
  // Per closed window: ms from the watermark passing its end (CloseReady)
  // to its rewards acknowledged by Kafka and stored (first 100000).
  std::vector<double> emission_latency_ms;
};

// Runs until *stop (may be null), exit_when_idle (closing the drained
// windows, see close_drained_windows), or an error the engine
// cannot continue after (fatal Kafka error, the buffer failing). Input never
// makes it fail. On return the producer is flushed and the last checkpoint
// stored (unless Kafka could not take the records: then they are replayed
// on the next start).
absl::StatusOr<EngineStats> RunRewardEngine(replay_buffer::ReplayStore& store,
                                            const EngineOptions& options,
                                            const std::atomic<bool>* stop);

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_ENGINE_H_
