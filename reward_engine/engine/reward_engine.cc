#include "reward_engine/engine/reward_engine.h"

#include <set>
#include <utility>

#include "common/kafka/kafka_error.h"
#include "reward_engine/engine/engine_checkpoint.h"
#include "reward_engine/engine/engine_run.h"

namespace phaseloop::reward_engine {
namespace engine_run {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             Clock::now().time_since_epoch())
      .count();
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
      if (absl::Status produced = Produce(options_.late_topic, m.key, m.value);
          !produced.ok() && options_.progress != nullptr) {
        *options_.progress << "phaseloop rewards: late record " << m.topic
                           << "/" << m.partition << "@" << m.offset
                           << " not copied to " << options_.late_topic << ": "
                           << produced.message() << "\n";
      }
      break;
    case Admission::kConflict:
      if (added.replayed) break;
      DeadLetter(m, absl::StrCat("conflict: deployment ", deployment,
                                 " has another policy_version than ", policy,
                                 " in this window"));
      break;
  }
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

}  // namespace engine_run

absl::StatusOr<EngineStats> RunRewardEngine(replay_buffer::ReplayStore& store,
                                            const EngineOptions& options,
                                            const std::atomic<bool>* stop) {
  engine_run::Engine engine(store, options, stop);
  return engine.Run();
}

}  // namespace phaseloop::reward_engine
