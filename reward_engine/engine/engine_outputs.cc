// The reward engine's output side (engine_run.h): what it produces to
// Kafka and stores in the buffer, and its progress lines.
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/dead_letter.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/lost_records_log.h"
#include "reward_engine/engine/budget_history.h"
#include "reward_engine/engine/engine_checkpoint.h"
#include "reward_engine/engine/engine_run.h"
#include "reward_engine/engine/reward_calculator.h"

namespace phaseloop::reward_engine::engine_run {

absl::Status Engine::Produce(const std::string& topic, const std::string& key,
                             const std::string& value) {
  absl::Status produced = producer_->Produce(topic, key, value);
  // A full queue is waited out inside Produce; a retriable error here means
  // it stayed full: deliver what is queued, then try again.
  while (!produced.ok() &&
         kafka::ClassOf(produced) == kafka::ErrorClass::kRetriable &&
         !Stopping()) {
    absl::Status delivered = Deliver();
    if (!delivered.ok()) return delivered;
    produced = producer_->Produce(topic, key, value);
  }
  return produced;
}

void Engine::DeadLetter(const kafka::ConsumedMessage& m,
                        const std::string& reason) {
  ++stats_.dead_letters;
  metrics_.DeadLetter(reason);
  // Said, the first few: the reason was only on the dead-letter topic.
  constexpr int64_t kSaid = 5;
  if (options_.progress != nullptr && stats_.dead_letters <= kSaid) {
    *options_.progress << "phaseloop rewards: " << m.topic << "/" << m.partition
                       << "@" << m.offset
                       << " set aside as a dead letter: " << reason
                       << (stats_.dead_letters == kSaid
                               ? " (further ones are counted, not said)"
                               : "")
                       << "\n";
  }
  const v1::DeadLetter letter =
      kafka::MakeDeadLetter(m, reason, kDeadLetterConsumer);
  absl::Status produced = Produce(options_.dead_letter_topic, letter.key(),
                                  letter.SerializeAsString());
  if (!produced.ok() && options_.progress != nullptr) {
    *options_.progress << "phaseloop rewards: dead letter for " << m.topic
                       << "/" << m.partition << "@" << m.offset
                       << " not produced: " << produced.message() << "\n";
  }
}

absl::Status Engine::Deliver() {
  while (true) {
    absl::Status flushed = producer_->Flush(std::chrono::seconds(5));
    if (flushed.ok()) return flushed;
    if (kafka::ClassOf(flushed) == kafka::ErrorClass::kFatal) return flushed;
    std::vector<kafka::DeliveryFailure> failures = producer_->TakeFailures();
    for (const kafka::DeliveryFailure& f : failures) {
      ++stats_.redelivered;
      absl::Status again = producer_->Produce(f.topic, f.key, f.value);
      if (!again.ok() &&
          kafka::ClassOf(again) != kafka::ErrorClass::kRetriable) {
        return again;
      }
    }
    if (Stopping() && spool_.has_value()) return KeepUndelivered({});
    if (Stopping() && failures.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "stopped while records were still in flight (", flushed.message(),
          "); they are produced again on the next start"));
    }
  }
}

absl::Status Engine::KeepUndelivered(std::chrono::milliseconds timeout) {
  if (!spool_.has_value()) return absl::OkStatus();
  absl::StatusOr<int64_t> kept = spool_->KeepUndelivered(*producer_, timeout);
  if (!kept.ok()) return kept.status();
  if (*kept > 0) {
    stats_.kept_for_retry += *kept;
    Log() << "phaseloop rewards: "
          << kafka::KeptForRetryMessage(*kept, spool_->dir()) << "\n";
  }
  return absl::OkStatus();
}

void Engine::RecordsLost(const kafka::RecordsLost& lost,
                         const absl::Status& status) {
  // Gone for good: count it, say so, record it, and go on with what is left.
  stats_.records_lost += lost.count();
  metrics_.RecordsLost(lost.partition, lost.count());
  Log() << "phaseloop rewards: " << status.message() << "\n";
  const kafka::LostRecordsEntry entry =
      kafka::MakeLostRecordsEntry(lost, options_.group_id, "reward engine");
  if (!options_.lost_records_log.empty()) {
    absl::Status recorded =
        kafka::AppendLostRecords(options_.lost_records_log, entry);
    Log() << "phaseloop rewards: "
          << (recorded.ok() ? "recorded in " + options_.lost_records_log
                            : std::string(recorded.message()))
          << "\n";
  }
  (void)Produce(options_.dead_letter_topic,
                kafka::LostRecordsDeadLetterKey(lost),
                kafka::MakeLostRecordsDeadLetter(entry, kDeadLetterConsumer)
                    .SerializeAsString());
}

absl::Status Engine::FitsStoredWindows(
    const std::vector<v1::FinalReward>& rewards) {
  for (const v1::FinalReward& reward : rewards) {
    replay_buffer::RewardFilter filter;
    filter.source = reward.source();
    filter.deployment_id = reward.deployment_id();
    filter.window_start_from_ms = reward.window_start_ms();
    filter.window_start_to_ms = reward.window_start_ms() + 1;
    absl::StatusOr<std::vector<v1::FinalReward>> stored =
        store_.ReadFinalRewards(filter);
    if (!stored.ok()) return stored.status();
    for (const v1::FinalReward& old : *stored) {
      const int64_t old_ms = old.unix_time_ms() - old.window_start_ms();
      if (old.reward_id() == reward.reward_id() &&
          old_ms != options_.windows.window_ms) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the buffer holds reward '", reward.reward_id(),
            "' for a window of ", old_ms, " ms, and this engine's windows are ",
            options_.windows.window_ms,
            " ms: one deployment's rewards need one window length. Give "
            "--window-ms ",
            old_ms,
            ", or another --buffer; this window's rewards were not "
            "produced or stored"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Engine::Commit(std::vector<ClosedWindow> closed, int64_t now_ms) {
  const Clock::time_point closed_at = Clock::now();
  replay_buffer::WriteBatch batch;
  bool observed = false;
  for (const ClosedWindow& window : closed) {
    auto slo = thresholds_.find(window.service);
    // Unknown services were dead-lettered; a window exists only with an SLO.
    if (slo == thresholds_.end()) continue;
    WindowRewards rewards = ComputeRewards(window, slo->second);
    // Checked before anything is produced: the rewards topic keys on the
    // same parts as the buffer's ids.
    absl::Status fits = FitsStoredWindows(rewards.final_rewards);
    if (!fits.ok()) return fits;
    for (const v1::Reward& reward : rewards.rewards) {
      absl::Status produced = Produce(
          options_.rewards_topic,
          kafka::RewardKey(reward.service(), reward.group(),
                           reward.deployment_id(), reward.window_start_ms()),
          reward.SerializeAsString());
      if (!produced.ok()) return produced;
    }
    for (const slo::SloWindowObservation& o : rewards.observations) {
      tracker_.Observe(o);
      observed = true;
    }
    stats_.rewards += static_cast<int64_t>(rewards.rewards.size());
    stats_.empty_groups += rewards.empty_groups;
    metrics_.Rewards(rewards.rewards.size());
    for (v1::FinalReward& f : rewards.final_rewards) {
      batch.rewards.push_back(std::move(f));
    }
    newest_closed_end_ms_ =
        std::max(newest_closed_end_ms_, window.window_end_ms);
  }
  if (observed) {
    // Budgets as of the newest closed window's end (event time).
    std::vector<v1::BudgetStatus> statuses =
        tracker_.Status(newest_closed_end_ms_);
    absl::Status published = budget_->PublishAll(statuses);
    if (!published.ok()) return published;
    stats_.budget_statuses += static_cast<int64_t>(statuses.size());
  }
  absl::Status delivered = Deliver();
  if (!delivered.ok()) return delivered;
  batch.offsets = CheckpointOffsets(options_.group_id, options_.sli_topic,
                                    windows_.Checkpoints());
  if (!batch.offsets.empty() || !batch.rewards.empty()) {
    absl::Status written = store_.Write(batch);
    if (!written.ok()) return written;
    windows_.CheckpointsStored();
    ++stats_.transactions;
  }
  stats_.windows_closed += static_cast<int64_t>(closed.size());
  metrics_.WindowsClosed(closed.size());
  if (!closed.empty()) {
    const double latency_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - closed_at)
            .count();
    for (size_t i = 0;
         i < closed.size() && stats_.emission_latency_ms.size() < 100000; ++i) {
      stats_.emission_latency_ms.push_back(latency_ms);
    }
  }
  (void)now_ms;
  dirty_ = false;
  return absl::OkStatus();
}

void Engine::Progress(bool force) {
  if (options_.progress == nullptr) return;
  if (!force && Clock::now() - last_progress_ < options_.progress_interval) {
    return;
  }
  last_progress_ = Clock::now();
  *options_.progress << "phaseloop rewards: " << stats_.records << " records, "
                     << stats_.merged << " merged, " << stats_.windows_closed
                     << " windows closed, " << stats_.rewards << " rewards, "
                     << stats_.late << " late, " << stats_.duplicates
                     << " duplicates, " << stats_.dead_letters
                     << " dead letters, watermark "
                     << (stats_.watermark_ms == kNoTime
                             ? std::string("none")
                             : std::to_string(stats_.watermark_ms))
                     << "\n";
}

absl::Status Engine::SeedBudgetHistory() {
  absl::StatusOr<BudgetHistory> history =
      ReadBudgetHistory(options_.bootstrap_servers, options_.rewards_topic,
                        options_.budget_history_timeout);
  if (!history.ok()) {
    return absl::Status(
        history.status().code(),
        absl::StrCat("seeding the error budgets from ", options_.rewards_topic,
                     ": ", history.status().message()));
  }
  for (const slo::SloWindowObservation& o : history->observations) {
    tracker_.Observe(o);
  }
  newest_closed_end_ms_ = history->newest_window_end_ms;
  stats_.history_windows = static_cast<int64_t>(history->observations.size());
  return absl::OkStatus();
}

absl::Status Engine::StartOutputs() {
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = options_.bootstrap_servers;
  producer_options.client_id = "phaseloop-rewards";
  producer_options.config = options_.producer_config;
  // Rewards are small records awaited one batch at a time: Nagle's
  // algorithm would hold each batch's last segment for the broker's
  // delayed ACK (~40 ms per close).
  producer_options.config.try_emplace("socket.nagle.disable", "true");
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(producer_options);
  if (!producer.ok()) return producer.status();
  producer_ = *std::move(producer);
  if (!options_.spool_dir.empty()) {
    // What an earlier run could not deliver goes first.
    absl::StatusOr<kafka::DeliverySpool> spool =
        kafka::DeliverySpool::Open(options_.spool_dir);
    if (!spool.ok()) return spool.status();
    spool_ = *std::move(spool);
    absl::StatusOr<kafka::SpoolRetry> retry =
        spool_->Retry(*producer_, std::chrono::seconds(30));
    if (!retry.ok()) return retry.status();
    stats_.spool_delivered = retry->delivered;
    if (std::string said = kafka::SpoolRetryMessage(*retry, spool_->dir());
        !said.empty()) {
      Log() << "phaseloop rewards: " << said << "\n";
    }
  }
  // Pay the first-connection and topic-lookup costs now, not on the first
  // close. Only an optimisation: if the cluster is not there yet, the
  // records wait for it as they would anyway.
  absl::Status warmed = producer_->LoadTopicMetadata(
      {options_.rewards_topic, options_.budget_topic, options_.late_topic,
       options_.dead_letter_topic},
      std::chrono::seconds(5));
  if (!warmed.ok() && options_.progress != nullptr) {
    *options_.progress << "phaseloop rewards: producer warm-up: "
                       << warmed.message() << "\n";
  }
  budget_ =
      std::make_unique<slo::BudgetPublisher>(*producer_, options_.budget_topic);
  absl::StatusOr<std::unique_ptr<kafka::EndOffsetProbe>> probe =
      kafka::EndOffsetProbe::Start(options_.bootstrap_servers,
                                   options_.sli_topic,
                                   options_.end_offset_interval);
  if (!probe.ok()) return probe.status();
  probe_ = *std::move(probe);

  return absl::OkStatus();
}

}  // namespace phaseloop::reward_engine::engine_run
