#include "staging_harness/results/stored_episode_sinks.h"

#include <chrono>

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
    const std::string& bootstrap, const std::string& topic) {
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "phaseloop-search";
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(options);
  if (!producer.ok()) return producer.status();
  return std::unique_ptr<KafkaEpisodeSink>(
      new KafkaEpisodeSink(std::move(*producer), topic));
}

absl::Status KafkaEpisodeSink::Write(const v1::Episode& episode) {
  return producer_->Produce(topic_, episode.module_hash(),
                            episode.SerializeAsString());
}

absl::Status KafkaEpisodeSink::Flush() {
  return producer_->Flush(std::chrono::seconds(60));
}

}  // namespace phaseloop::search
