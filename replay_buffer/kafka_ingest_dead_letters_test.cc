// The ingest's dead letters, through the embedded cluster: each names the
// record and why (v1::DeadLetter), fits a Kafka message whatever the
// record's size, and one Kafka refuses is kept for the next run.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <utility>

#include "common/kafka/delivery_spool.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/state_dir.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "phaseloop/v1/reward.pb.h"
#include "replay_buffer/buffer_command.h"
#include "replay_buffer/decision_producer.h"
#include "replay_buffer/kafka_ingest.h"
#include "replay_buffer/kafka_ingest_test_util.h"

namespace phaseloop::replay_buffer {
namespace {

using ingest_test::DecisionBatches;
using ingest_test::kDecisions;
using ingest_test::kTopic;
using ingest_test::Pointers;
using ingest_test::ProduceEpisodes;
using ingest_test::QuickIngestOptions;
using ingest_test::ReadDeadLetters;

// The dead-letter spool of the state directory `state`, and what it keeps
// (a test failure when it cannot be read).
std::string DeadLetterSpool(const std::string& state) {
  return kafka::SpoolDirPath(state, "dead-letters");
}
std::vector<kafka::SpooledRecord> KeptDeadLetters(const std::string& state) {
  auto spool = kafka::DeliverySpool::Open(DeadLetterSpool(state));
  EXPECT_TRUE(spool.ok()) << spool.status();
  if (!spool.ok()) return {};
  auto kept = spool->Records();
  EXPECT_TRUE(kept.ok()) << kept.status();
  return kept.ok() ? *std::move(kept) : std::vector<kafka::SpooledRecord>{};
}

// A malformed record's dead letter that Kafka refuses is kept in the state
// directory's spool (never dropped) and delivered first by the next run.
TEST(KafkaIngestTest, DeadLettersKafkaRefusesAreKeptForTheNextRun) {
  std::unique_ptr<kafka::EmbeddedCluster> cluster =
      ingest_test::ClusterWithDeadLetters(kTopic);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  auto producer = ingest_test::MakeProducer(bootstrap);
  ASSERT_NE(producer, nullptr);
  ProduceEpisodes(*producer, 0, 3);
  ASSERT_TRUE(producer->Produce(kTopic, "junk", "not an episode").ok());
  ASSERT_TRUE(producer->Flush(std::chrono::seconds(30)).ok());
  // The next produce request (the dead letter's) is refused for good.
  ASSERT_TRUE(
      cluster
          ->PushRequestErrors(kafka::ApiKey::kProduce,
                              {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED})
          .ok());

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  const std::string state = testing::MakeTempDir() + "/state";
  setenv("PHASELOOP_STATE_DIR", state.c_str(), 1);
  const IngestOptions options = QuickIngestOptions(bootstrap);
  std::ostringstream out, err;
  EXPECT_EQ(RunBufferIngest(path, options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("1 malformed records dead-lettered"),
            std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find("kept for retry in " + DeadLetterSpool(state)),
            std::string::npos)
      << err.str();
  std::vector<kafka::SpooledRecord> kept = KeptDeadLetters(state);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].topic, kafka::kDeadLetterTopic);
  v1::DeadLetter letter;
  ASSERT_TRUE(letter.ParseFromString(kept[0].value));
  EXPECT_EQ(letter.value(), "not an episode");
  EXPECT_EQ(letter.reason(),
            "malformed: not a phaseloop.v1.Episode with an episode_id");
  EXPECT_EQ(kafka::testing::Watermarks(bootstrap,
                                       std::string(kafka::kDeadLetterTopic), 0)
                .second,
            0);

  // The next run delivers it first, once; the spool is empty after.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunBufferIngest(path, options, out2, err2), 0) << err2.str();
  EXPECT_NE(err2.str().find("dead letters' spool " + DeadLetterSpool(state) +
                            ": 1 records of an earlier run delivered"),
            std::string::npos)
      << err2.str();
  EXPECT_TRUE(KeptDeadLetters(state).empty());
  EXPECT_EQ(kafka::testing::Watermarks(bootstrap,
                                       std::string(kafka::kDeadLetterTopic), 0)
                .second,
            1);
  unsetenv("PHASELOOP_STATE_DIR");
}

// A record larger than the ingest's producer may send (1 MB): its dead
// letter carries the first 512 KiB and says so, so Kafka takes it (a whole
// copy was refused, and kept in the spool to be refused at every run).
TEST(KafkaIngestTest, AHugeRecordsDeadLetterIsCutAndDelivered) {
  std::unique_ptr<kafka::EmbeddedCluster> cluster =
      ingest_test::ClusterWithDeadLetters(kTopic);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  producer_options.config["message.max.bytes"] = "4000000";
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ProduceEpisodes(**producer, 0, 2);
  const std::string huge(2000000, 'x');  // over ingest's producer's 1 MB
  ASSERT_TRUE((*producer)->Produce(kTopic, "huge", huge).ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  const std::string state = testing::MakeTempDir() + "/state";
  setenv("PHASELOOP_STATE_DIR", state.c_str(), 1);
  std::ostringstream out, err;
  EXPECT_EQ(RunBufferIngest(path, QuickIngestOptions(bootstrap), out, err), 0)
      << err.str();
  EXPECT_NE(out.str().find("ingested 2 episodes"), std::string::npos)
      << out.str();
  EXPECT_EQ(err.str().find("kept for retry"), std::string::npos) << err.str();
  EXPECT_TRUE(KeptDeadLetters(state).empty());
  const std::vector<v1::DeadLetter> letters = ReadDeadLetters(bootstrap, 1);
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_EQ(letters[0].source_topic(), kTopic);
  EXPECT_EQ(letters[0].source_offset(), 2);
  EXPECT_EQ(letters[0].key(), "huge");
  EXPECT_EQ(letters[0].consumer(), "buffer-ingest");
  EXPECT_EQ(letters[0].reason(),
            "malformed: not a phaseloop.v1.Episode with an episode_id");
  EXPECT_TRUE(letters[0].value_truncated());
  EXPECT_EQ(letters[0].value_size(), 2000000);
  EXPECT_EQ(letters[0].value(), huge.substr(0, 512 * 1024));
  unsetenv("PHASELOOP_STATE_DIR");
}

// A record on phaseloop.decisions that is not a Decision (or has no id) is
// counted, produced to the dead-letter topic and skipped; the decisions
// around it are stored.
TEST(KafkaIngestTest, MalformedDecisionRecordsAreDeadLettered) {
  std::unique_ptr<kafka::EmbeddedCluster> cluster =
      ingest_test::ClusterWithDeadLetters(kDecisions);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  const std::vector<v1::DecisionBatch> batches = DecisionBatches(1, 3);
  ASSERT_TRUE(ProduceDecisionBatches(bootstrap, Pointers(batches))[0].ok());
  auto producer = ingest_test::MakeProducer(bootstrap);
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer->Produce(kDecisions, "junk", "not a decision").ok());
  v1::Decision no_id;
  no_id.set_build_id("build-1");
  ASSERT_TRUE(
      producer->Produce(kDecisions, "", no_id.SerializeAsString()).ok());
  // A search job on the decisions topic (it parsed, and was stored as a
  // decision): dead-lettered. A newer producer's decision with a field this
  // build does not know (number 1000): stored, as protobuf means it to be.
  v1::SearchJob job;
  job.set_job_id("missing1");
  job.set_bitcode_path("/nonexistent/x.bc");
  job.set_budget_seconds(10);
  ASSERT_TRUE(
      producer->Produce(kDecisions, "job", job.SerializeAsString()).ok());
  v1::Decision newer = batches[0].decisions(0);
  newer.set_decision_id("decision-from-a-newer-producer");
  const std::string added_field("\xc0\x3e\x01", 3);  // field 1000 = 1
  ASSERT_TRUE(producer
                  ->Produce(kDecisions, "newer",
                            newer.SerializeAsString() + added_field)
                  .ok());
  ASSERT_TRUE(producer->Flush(std::chrono::seconds(30)).ok());

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  IngestOptions options = QuickIngestOptions(bootstrap);
  options.topic = "";  // decisions only
  options.decisions_topic = kDecisions;
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok());
  auto stats = RunKafkaIngest(**store, options, producer.get(), nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 7);
  EXPECT_EQ(stats->decisions, 4);
  EXPECT_EQ(stats->malformed, 3);
  EXPECT_EQ((*store)->ReadDecisions(DecisionFilter())->size(), 4u);
  ASSERT_TRUE(producer->Flush(std::chrono::seconds(30)).ok());
  // Each letter names the record and why.
  std::map<std::string, std::string> reasons;  // key -> reason
  for (const v1::DeadLetter& letter : ReadDeadLetters(bootstrap, 3)) {
    EXPECT_EQ(letter.source_topic(), kDecisions);
    EXPECT_EQ(letter.consumer(), "buffer-ingest");
    reasons[letter.key()] = letter.reason();
  }
  EXPECT_EQ(reasons["junk"],
            "malformed: not a phaseloop.v1.Decision with a decision_id");
  EXPECT_EQ(reasons["job"], reasons["junk"]);
  EXPECT_EQ(reasons[""].rfind("malformed: ", 0), 0u) << reasons[""];
}

}  // namespace
}  // namespace phaseloop::replay_buffer
