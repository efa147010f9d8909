#include "replay_buffer/kafka_ingest_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

#include "common/kafka/consumer.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer::ingest_test {

std::unique_ptr<kafka::Producer> MakeProducer(const std::string& bootstrap) {
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(options);
  EXPECT_TRUE(producer.ok()) << producer.status();
  return producer.ok() ? *std::move(producer) : nullptr;
}

std::unique_ptr<kafka::EmbeddedCluster> ClusterWithDeadLetters(
    const std::string& topic) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  for (const std::string& name :
       {topic, std::string(kafka::kDeadLetterTopic)}) {
    absl::Status created = (*cluster)->CreateTopic(name, 1, 1);
    EXPECT_TRUE(created.ok()) << created;
    if (!created.ok()) return nullptr;
  }
  return *std::move(cluster);
}

void ProduceEpisodes(kafka::Producer& producer, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    std::string module = std::string(31, 'a') + static_cast<char>('0' + i % 10);
    v1::Episode episode = test_records::MakeEpisode(
        "episode-" + std::to_string(i), module, 5, static_cast<uint64_t>(i));
    ASSERT_TRUE(
        producer.Produce(kTopic, module, episode.SerializeAsString()).ok());
  }
  ASSERT_TRUE(producer.Flush(std::chrono::seconds(30)).ok());
}

IngestOptions QuickIngestOptions(const std::string& bootstrap) {
  IngestOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = kTopic;
  options.idle_exit = std::chrono::milliseconds(2500);
  options.consumer_config = kafka::testing::QuickGroupConfig();
  return options;
}

std::vector<v1::DeadLetter> ReadDeadLetters(const std::string& bootstrap,
                                            size_t count) {
  auto consumer = kafka::Consumer::Create(kafka::testing::GroupOptions(
      bootstrap, "dead-letter-reader", {std::string(kafka::kDeadLetterTopic)}));
  EXPECT_TRUE(consumer.ok()) << consumer.status();
  std::vector<v1::DeadLetter> letters;
  if (!consumer.ok()) return letters;
  const std::vector<std::vector<kafka::ConsumedMessage>> read =
      kafka::testing::ConsumeFrom({consumer->get()}, count,
                                  std::chrono::seconds(30));
  for (const kafka::ConsumedMessage& m : read[0]) {
    v1::DeadLetter letter;
    EXPECT_TRUE(letter.ParseFromString(m.value)) << m.key;
    EXPECT_EQ(letter.key(), m.key);
    letters.push_back(std::move(letter));
  }
  EXPECT_EQ(letters.size(), count);
  return letters;
}

std::vector<v1::DecisionBatch> DecisionBatches(int files, int per_file) {
  std::vector<v1::DecisionBatch> batches(files);
  for (int f = 0; f < files; ++f) {
    for (int i = 0; i < per_file; ++i) {
      v1::Decision* d = batches[f].add_decisions();
      d->set_decision_id("decision-" + std::to_string(f) + "-" +
                         std::to_string(i));
      d->set_build_id("build-1");
      d->set_module_hash(std::string(31, 'b') + static_cast<char>('0' + i));
      d->set_outcome(v1::OPTIMIZED);
      d->set_pipeline("instcombine");
    }
  }
  return batches;
}

std::vector<const v1::DecisionBatch*> Pointers(
    const std::vector<v1::DecisionBatch>& batches) {
  std::vector<const v1::DecisionBatch*> pointers;
  for (const v1::DecisionBatch& b : batches) pointers.push_back(&b);
  return pointers;
}

}  // namespace phaseloop::replay_buffer::ingest_test
