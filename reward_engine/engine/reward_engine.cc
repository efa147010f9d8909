#include "reward_engine/engine/reward_engine.h"

#include <iostream>
#include <optional>
#include <ostream>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/end_offset_probe.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/producer.h"
#include "reward_engine/engine/budget_history.h"
#include "reward_engine/engine/engine_checkpoint.h"
#include "reward_engine/engine/engine_metrics.h"
#include "reward_engine/engine/reward_calculator.h"
#include "reward_engine/engine/sli_input.h"
#include "reward_engine/slo/budget_publisher.h"
#include "reward_engine/slo/error_budget.h"

namespace phaseloop::reward_engine {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             Clock::now().time_since_epoch())
      .count();
}

// Unix ms: the clock SLI windows' event times are on.
int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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
  absl::Status produced =
      Produce(options_.dead_letter_topic, m.key,
              MakeDeadLetter(m, reason).SerializeAsString());
  if (!produced.ok() && options_.progress != nullptr) {
    *options_.progress << "phaseloop rewards: dead letter for " << m.topic
                       << "/" << m.partition << "@" << m.offset
                       << " not produced: " << produced.message() << "\n";
  }
}

void Engine::Handle(const kafka::ConsumedMessage& m, int64_t now_ms) {
  ++stats_.records;
  metrics_.Records();
  dirty_ = true;
  absl::StatusOr<SliInput> input =
      DecodeSliRecord(m, options_.windows.window_ms, thresholds_);
  if (!input.ok()) {
    if (windows_.Skip(m.partition, m.offset, now_ms)) {
      DeadLetter(m, std::string(input.status().message()));
    }
    return;
  }
  const std::string policy = input->policy_version;
  const std::string deployment = input->deployment_id;
  AddResult added = windows_.Add(*std::move(input), now_ms);
  switch (added.admission) {
    case Admission::kAccepted:
      ++stats_.merged;
      metrics_.Merged();
      break;
    case Admission::kDuplicate:
      ++stats_.duplicates;
      metrics_.Duplicate();
      break;
    case Admission::kReplayed:
      ++stats_.replayed;
      break;
    case Admission::kLate:
      if (added.replayed) break;
      ++stats_.late;
      metrics_.Late();
      (void)Produce(options_.late_topic, m.key, m.value);
      break;
    case Admission::kConflict:
      if (added.replayed) break;
      DeadLetter(m, absl::StrCat("conflict: deployment ", deployment,
                                 " has another policy_version than ", policy,
                                 " in this window"));
      break;
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
  v1::DeadLetter letter;
  letter.set_source_topic(lost.topic);
  letter.set_source_partition(lost.partition);
  letter.set_source_offset(lost.first_offset);
  letter.set_reason(absl::StrCat("lost: offsets ", lost.first_offset, "..",
                                 lost.last_offset,
                                 " deleted from Kafka before they were read"));
  letter.set_value(kafka::LostRecordsLine(entry));
  letter.set_consumer("reward-engine");
  (void)Produce(options_.dead_letter_topic,
                absl::StrCat(lost.topic, "/", lost.partition),
                letter.SerializeAsString());
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

absl::Status Engine::CheckOptions() const {
  if (thresholds_.empty()) {
    return absl::InvalidArgumentError(
        "no SLOs: the engine needs at least one (see --slo-dir)");
  }
  if (options_.windows.window_ms <= 0 || options_.windows.lateness_ms < 0 ||
      options_.windows.idle_ms < 0) {
    return absl::InvalidArgumentError(
        "window_ms must be > 0, lateness_ms and idle_ms >= 0");
  }
  return absl::OkStatus();
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
    if (retry->delivered > 0 || retry->kept > 0 || !retry->unreadable.empty()) {
      Log() << "phaseloop rewards: spool " << spool_->dir() << ": "
            << retry->delivered << " records of an earlier run delivered, "
            << retry->kept << " still kept for retry";
      for (const std::string& file : retry->unreadable) {
        Log() << "; unreadable, set aside: " << file;
      }
      Log() << "\n";
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

absl::StatusOr<std::unique_ptr<kafka::Consumer>> Engine::StartConsumer() {
  kafka::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = options_.bootstrap_servers;
  consumer_options.group_id = options_.group_id;
  consumer_options.client_id = "phaseloop-rewards";
  consumer_options.topics = {options_.sli_topic};
  consumer_options.config = options_.consumer_config;
  consumer_options.offset_lookup =
      [this](const std::vector<kafka::TopicPartition>& assigned)
      -> absl::StatusOr<kafka::OffsetMap> {
    absl::StatusOr<std::map<int32_t, PartitionCheckpoint>> stored =
        ReadCheckpoints(store_, options_.group_id, options_.sli_topic);
    if (!stored.ok()) return stored.status();
    kafka::OffsetMap next;
    std::set<int32_t> partitions;
    for (const kafka::TopicPartition& tp : assigned) {
      if (tp.topic != options_.sli_topic) continue;
      partitions.insert(tp.partition);
      auto it = stored->find(tp.partition);
      if (it == stored->end()) {
        windows_.Assign(tp.partition, std::nullopt, NowMs());
      } else {
        windows_.Assign(tp.partition, it->second, NowMs());
        next[tp] = it->second.next_offset;
      }
    }
    probe_->Watch(partitions);
    assigned_ = !partitions.empty();
    metrics_.Assigned(partitions.size());
    return next;
  };
  // Eager rebalancing: everything is revoked, then the new assignment
  // resumes from the stored checkpoints; open windows are rebuilt there.
  consumer_options.on_revoke =
      [this](const std::vector<kafka::TopicPartition>&) {
        windows_.Reset();
        probe_->Watch({});
        assigned_ = false;
        metrics_.Assigned(0);
      };
  return kafka::Consumer::Create(consumer_options);
}

absl::StatusOr<bool> Engine::ApplyEndOffsets(kafka::Consumer& consumer) {
  bool moved_to_start = false;
  for (const auto& [partition, end] : probe_->EndOffsets()) {
    const EndOffsetCheck check = windows_.SetEndOffset(partition, end);
    if (check == EndOffsetCheck::kSameLog) continue;
    Log() << "phaseloop rewards: " << options_.sli_topic << "/" << partition
          << " ends at offset " << end
          << ", before the stored checkpoint of group " << options_.group_id
          << ": the topic was recreated (a new cluster?); its records are "
             "read as new input";
    if (check == EndOffsetCheck::kOtherLogMoveToStart) {
      // Placed at the old next offset, which this log also has: the
      // records below it would never be read.
      absl::Status moved = consumer.Seek({options_.sli_topic, partition}, 0,
                                         std::chrono::milliseconds(10000));
      if (!moved.ok()) return moved;
      moved_to_start = true;
      Log() << " from its start (the consumer was placed inside it)";
    }
    Log() << "\n";
  }
  return moved_to_start;
}

absl::Status Engine::ConsumeUntilDone(kafka::Consumer& consumer) {
  Clock::time_point last_record = Clock::now();
  Clock::time_point last_checkpoint = Clock::now();
  int64_t last_refresh_ms = 0;
  bool drained = false;  // stopped by exit_when_idle
  absl::Status failure;
  while (!Stopping()) {
    absl::StatusOr<std::optional<kafka::ConsumedMessage>> message =
        consumer.Poll(std::chrono::milliseconds(100));
    if (!message.ok()) {
      if (auto lost = kafka::RecordsLostOf(message.status())) {
        RecordsLost(*lost, message.status());
        continue;
      }
      if (kafka::ClassOf(message.status()) == kafka::ErrorClass::kRetriable) {
        continue;
      }
      failure = message.status();
      break;
    }
    const int64_t now_ms = NowMs();
    // The record first: it was read at the position the end offsets may
    // move. Applied before it, an end offset that shows the checkpoint was
    // another log's resets the partition and seeks it to the log's start,
    // and a record polled from the old position would then count as the
    // first one read there: its event time would pass the watermark over
    // every record below it (all late). Handled first, it is a replayed
    // record the reset forgets, and it is merged once when read again.
    if (message->has_value()) {
      last_record = Clock::now();
      Handle(**message, now_ms);
    }
    // End offsets and gauges change slowly: refresh them every 100 ms, not
    // per record.
    const bool refresh = now_ms - last_refresh_ms >= 100;
    if (refresh) {
      last_refresh_ms = now_ms;
      absl::StatusOr<bool> moved = ApplyEndOffsets(consumer);
      if (!moved.ok()) {
        failure = moved.status();
        break;
      }
      // A partition read again from its start is not idle input, however
      // long the seek took.
      if (*moved) last_record = Clock::now();
    }
    std::vector<ClosedWindow> closed;
    if (options_.close_idle_after.count() > 0 && windows_.open_windows() > 0 &&
        Clock::now() - last_record >= options_.close_idle_after) {
      // Quiet input: the newest window closes lateness after its end on the
      // wall clock, not when a later window's data comes (it may not).
      absl::StatusOr<bool> moved = ApplyEndOffsets(consumer);
      if (!moved.ok()) {
        failure = moved.status();
        break;
      }
      if (*moved) last_record = Clock::now();
      closed = windows_.CloseDrained(now_ms, WallClockMs());
    } else {
      closed = windows_.CloseReady(now_ms);
    }
    stats_.watermark_ms = windows_.Watermark(now_ms);
    if (refresh || !message->has_value()) {
      metrics_.State(stats_.watermark_ms, windows_.open_windows(),
                     windows_.Lag());
    }
    if (!closed.empty() || (dirty_ && Clock::now() - last_checkpoint >=
                                          options_.checkpoint_interval)) {
      absl::Status committed = Commit(std::move(closed), now_ms);
      if (!committed.ok()) {
        failure = committed;
        break;
      }
      last_checkpoint = Clock::now();
    }
    Progress(false);
    if (options_.exit_when_idle.count() > 0) {
      // (Tracked by the rebalance callbacks: asking librdkafka for the
      // assignment is a round trip to its main thread, per record.)
      if (!assigned_) last_record = Clock::now();
      if (Clock::now() - last_record >= options_.exit_when_idle) {
        drained = true;
        break;
      }
    }
  }
  if (!failure.ok()) return failure;
  std::vector<ClosedWindow> closed;
  if (drained && options_.close_drained_windows) {
    // (A partition it moves to its start is not caught up: CloseDrained
    // then closes only what the watermark allows.)
    if (absl::StatusOr<bool> moved = ApplyEndOffsets(consumer); !moved.ok()) {
      return moved.status();
    }
    closed = windows_.CloseDrained(NowMs(), WallClockMs());
    stats_.watermark_ms = windows_.Watermark(NowMs());
  }
  // Stopping: store the progress (and what closed above).
  if (!closed.empty() || dirty_) failure = Commit(std::move(closed), NowMs());
  return failure;
}

absl::StatusOr<EngineStats> Engine::Run() {
  if (absl::Status ok = CheckOptions(); !ok.ok()) return ok;
  if (options_.seed_budget_history) {
    if (absl::Status seeded = SeedBudgetHistory(); !seeded.ok()) return seeded;
  }
  if (absl::Status started = StartOutputs(); !started.ok()) return started;
  absl::StatusOr<std::unique_ptr<kafka::Consumer>> consumer = StartConsumer();
  if (!consumer.ok()) return consumer.status();
  absl::Status failure = ConsumeUntilDone(**consumer);
  Progress(true);
  (void)(*consumer)->Close();
  // Whatever Kafka has not acknowledged by now (a failure, or records left
  // in flight) stays on disk instead of leaving with the producer.
  absl::Status kept = KeepUndelivered(std::chrono::seconds(10));
  if (failure.ok()) failure = kept;
  if (!failure.ok()) return failure;
  return stats_;
}

}  // namespace

absl::StatusOr<EngineStats> RunRewardEngine(replay_buffer::ReplayStore& store,
                                            const EngineOptions& options,
                                            const std::atomic<bool>* stop) {
  Engine engine(store, options, stop);
  return engine.Run();
}

}  // namespace phaseloop::reward_engine
