#include "staging_harness/results/stored_episode_sinks.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/protobuf/utf8_strings.h"

namespace phaseloop::search {

absl::Status BufferEpisodeSink::Write(const v1::Episode& episode) {
  v1::BestSequence best;
  if (replay_buffer::BestSequenceOf(episode, &best)) {
    pending_.best_sequences.push_back(best);
  }
  pending_.episodes.push_back(episode);
  if (pending_.episodes.size() >= batch_) return Flush();
  return absl::OkStatus();
}

absl::Status BufferEpisodeSink::Flush() {
  if (pending_.episodes.empty()) return absl::OkStatus();
  absl::Status written = store_->Write(pending_);
  if (written.ok()) pending_ = replay_buffer::WriteBatch();
  return written;
}

absl::StatusOr<std::unique_ptr<KafkaEpisodeSink>> KafkaEpisodeSink::Create(
    const std::string& bootstrap, const std::string& topic,
    const std::string& spool_dir) {
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "phaseloop-search";
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(options);
  if (!producer.ok()) return producer.status();
  std::unique_ptr<KafkaEpisodeSink> sink(
      new KafkaEpisodeSink(std::move(*producer), topic));
  if (!spool_dir.empty()) {
    absl::StatusOr<kafka::DeliverySpool> spool =
        kafka::DeliverySpool::Open(spool_dir);
    if (!spool.ok()) return spool.status();
    sink->spool_ = *std::move(spool);
    // What an earlier run could not deliver goes first.
    absl::StatusOr<kafka::SpoolRetry> retry =
        sink->spool_->Retry(*sink->producer_, std::chrono::seconds(60));
    if (!retry.ok()) return retry.status();
    sink->spool_retry_ = *std::move(retry);
  }
  return sink;
}

absl::Status KafkaEpisodeSink::Write(const v1::Episode& episode) {
  return producer_->Produce(topic_, episode.module_hash(),
                            protobuf::SerializeAsValidUtf8(episode));
}

absl::Status KafkaEpisodeSink::Flush() {
  absl::Status flushed = producer_->Flush(std::chrono::seconds(60));
  if (flushed.ok() || !spool_.has_value()) return flushed;
  // Not acknowledged: kept on disk for the next run, never dropped.
  absl::StatusOr<int64_t> kept =
      spool_->KeepUndelivered(*producer_, std::chrono::seconds(0));
  if (!kept.ok()) {
    return absl::Status(
        kept.status().code(),
        absl::StrCat(flushed.message(), "; and ", kept.status().message()));
  }
  kept_for_retry_ += *kept;
  return absl::OkStatus();
}

}  // namespace phaseloop::search
