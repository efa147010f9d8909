// Episodes and decisions through a real Kafka protocol broker (the embedded
// cluster on loopback) into the buffer: every record once, malformed records
// skipped and dead-lettered, a restart resumes from the offsets stored with
// the rows.
#include "replay_buffer/kafka_ingest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <utility>

#include "common/kafka/embedded_cluster.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "phaseloop/v1/reward.pb.h"
#include "replay_buffer/buffer_command.h"
#include "replay_buffer/decision_producer.h"
#include "replay_buffer/kafka_ingest_test_util.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using ingest_test::DecisionBatches;
using ingest_test::kDecisions;
using ingest_test::kTopic;
using ingest_test::Pointers;
using ingest_test::ProduceEpisodes;
using ingest_test::QuickIngestOptions;
using ingest_test::ReadDeadLetters;

TEST(KafkaIngestTest, StoresEveryEpisodeOnceAndResumesFromStoredOffsets) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 4, 1).ok());
  ASSERT_TRUE(
      (*cluster)->CreateTopic(std::string(kafka::kDeadLetterTopic), 1, 1).ok());
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = (*cluster)->bootstrap_servers();
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();

  ProduceEpisodes(**producer, 0, 40);
  ASSERT_TRUE((*producer)->Produce(kTopic, "junk", "not an episode").ok());
  // An Episode the buffer refuses (two steps of one index): dead-lettered
  // alone, not failing the batch it would have joined.
  v1::Episode twice =
      test_records::MakeEpisode("episode-twice", std::string(32, 'c'), 3, 7);
  for (v1::Step& step : *twice.mutable_steps()) step.set_index(0);
  ASSERT_TRUE(
      (*producer)
          ->Produce(kTopic, twice.module_hash(), twice.SerializeAsString())
          .ok());
  // A NaN reward (SQLite stores it as NULL: the batch's write failed at
  // every run), and a Decision on the episodes topic (it parsed as an
  // Episode, its fields unknown ones, and was stored).
  v1::Episode nan =
      test_records::MakeEpisode("episode-nan", std::string(32, 'd'), 3, 7);
  nan.mutable_steps(0)->set_reward(std::nan(""));
  ASSERT_TRUE((*producer)
                  ->Produce(kTopic, nan.module_hash(), nan.SerializeAsString())
                  .ok());
  v1::Decision decision;
  decision.set_decision_id("dec-123");
  decision.set_outcome(v1::OPTIMIZED);
  decision.set_source("a.c");
  ASSERT_TRUE(
      (*producer)->Produce(kTopic, "dec", decision.SerializeAsString()).ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  const IngestOptions options =
      QuickIngestOptions((*cluster)->bootstrap_servers());
  {
    auto store = OpenReplayStore(path);
    ASSERT_TRUE(store.ok());
    auto stats = RunKafkaIngest(**store, options, producer->get(), nullptr);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->episodes, 40);
    EXPECT_EQ(stats->malformed, 4);
    EXPECT_EQ(stats->records, 44);
  }
  // Each dead letter says why: not an Episode, or refused by the buffer.
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  std::map<std::string, std::string> reasons;  // key -> reason
  for (const v1::DeadLetter& letter :
       ReadDeadLetters((*cluster)->bootstrap_servers(), 4)) {
    reasons[letter.key()] = letter.reason();
  }
  EXPECT_EQ(reasons["junk"],
            "malformed: not a phaseloop.v1.Episode with an episode_id");
  EXPECT_EQ(reasons["dec"], reasons["junk"]);
  EXPECT_EQ(
      reasons[twice.module_hash()].rfind("invalid: refused by the buffer: ", 0),
      0u)
      << reasons[twice.module_hash()];
  EXPECT_NE(reasons[nan.module_hash()].find("reward"), std::string::npos)
      << reasons[nan.module_hash()];
  // More episodes, and ten old ones again (a producer retrying after a
  // timeout): the second run reads only what is new and upserts.
  ProduceEpisodes(**producer, 40, 20);
  ProduceEpisodes(**producer, 0, 10);
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok());
  auto stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 30);  // nothing of the first run again
  EXPECT_EQ(stats->malformed, 0);
  auto buffer = (*store)->Stats();
  ASSERT_TRUE(buffer.ok());
  int64_t episodes = 0;
  for (const auto& group : buffer->episodes) episodes += group.episodes;
  EXPECT_EQ(episodes, 60);
  auto offsets = (*store)->ReadOffsets(options.group, kTopic);
  ASSERT_TRUE(offsets.ok());
  int64_t total = 0;
  for (const ConsumerOffset& o : *offsets) total += o.next_offset;
  EXPECT_EQ(total, 74);  // every record of the topic, committed with rows
}

// The topic recreated under the group (a new embedded cluster, the buffer
// kept): the stored offset was taken on another cluster, so the consumer
// starts at the new log's first record; the offsets it commits replace the
// stored ones, so a later run resumes in this log, not at the old log's
// offset (which, once this log outgrew it, would skip records unseen).
TEST(KafkaIngestTest, ARecreatedTopicIsReadWholeAndItsOffsetsReplaceTheOld) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  // Runs one ingest (stopping at the topic's end, as the canary's builds
  // do, or when idle); stored_offset reads what it left.
  auto ingest = [&](const std::string& bootstrap,
                    bool exit_at_end) -> absl::StatusOr<IngestStats> {
    auto store = OpenReplayStore(path);
    if (!store.ok()) return store.status();
    IngestOptions options = QuickIngestOptions(bootstrap);
    options.exit_at_end = exit_at_end;
    return RunKafkaIngest(**store, options, nullptr, nullptr);
  };
  auto stored_offset = [&]() -> int64_t {
    auto store = OpenReplayStore(path);
    if (!store.ok()) return -1;
    auto offsets = (*store)->ReadOffsets(IngestOptions().group, kTopic);
    return offsets.ok() && offsets->size() == 1u ? (*offsets)[0].next_offset
                                                 : -1;
  };
  struct Topic {
    std::unique_ptr<kafka::EmbeddedCluster> cluster;
    std::unique_ptr<kafka::Producer> producer;
  };
  auto start = [](int first, int count, Topic* topic) {
    auto cluster = kafka::EmbeddedCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 1, 1).ok());
    kafka::ProducerOptions producer_options;
    producer_options.bootstrap_servers = (*cluster)->bootstrap_servers();
    auto producer = kafka::Producer::Create(producer_options);
    ASSERT_TRUE(producer.ok()) << producer.status();
    ProduceEpisodes(**producer, first, count);
    topic->cluster = *std::move(cluster);
    topic->producer = *std::move(producer);
  };
  {
    Topic old_topic;
    ASSERT_NO_FATAL_FAILURE(start(0, 40, &old_topic));
    auto stats = ingest(old_topic.cluster->bootstrap_servers(), false);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->records, 40);
    EXPECT_EQ(stats->recreated_partitions, 0);
  }
  ASSERT_EQ(stored_offset(), 40);
  Topic topic;
  ASSERT_NO_FATAL_FAILURE(start(100, 10, &topic));
  kafka::EmbeddedCluster* cluster = topic.cluster.get();
  kafka::Producer* producer = topic.producer.get();
  // Stopping at the end: the end (10) is below the stored offset, which
  // does not make the partition read to its end.
  auto stats = ingest(cluster->bootstrap_servers(), true);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 10);
  EXPECT_EQ(stats->recreated_partitions, 1);
  EXPECT_EQ(stored_offset(), 10);
  // This log outgrows the old one's offset: read from 10, nothing skipped.
  ProduceEpisodes(*producer, 110, 40);
  stats = ingest(cluster->bootstrap_servers(), false);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 40);
  EXPECT_EQ(stats->recreated_partitions, 0);
  EXPECT_EQ(stored_offset(), 50);

  // A third cluster whose log outgrew the stored offset (50) before the
  // ingest ran: the offset is there, but it was taken on another cluster
  // (kept with it); read from the start, nothing skipped (offsets 0..49
  // were skipped without a word).
  Topic third;
  ASSERT_NO_FATAL_FAILURE(start(200, 70, &third));
  stats = ingest(third.cluster->bootstrap_servers(), false);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 70);
  EXPECT_EQ(stats->recreated_partitions, 1);
  EXPECT_EQ(stored_offset(), 70);
}

// More than the embedded cluster keeps of one partition (10 MB of
// non-episode records, then 20 episodes): `buffer ingest` stores what is
// left, names the deleted offsets on stderr and exits 1.
TEST(KafkaIngestTest, BufferIngestReportsRecordsDeletedBeforeItReadThem) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 1, 1).ok());
  kafka::testing::ProduceBulk(bootstrap, kTopic, 160, 64 * 1024);
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ProduceEpisodes(**producer, 0, 20);
  auto [low, high] = kafka::testing::Watermarks(bootstrap, kTopic, 0);
  ASSERT_EQ(high, 180);
  ASSERT_GT(low, 0);

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  const std::string state = testing::MakeTempDir() + "/state";
  setenv("PHASELOOP_STATE_DIR", state.c_str(), 1);
  const IngestOptions options = QuickIngestOptions(bootstrap);
  std::ostringstream out, err;
  EXPECT_EQ(RunBufferIngest(path, options, out, err), 1) << err.str();
  EXPECT_NE(out.str().find("ingested 20 episodes and 0 decisions from " +
                           std::to_string(high - low) + " records"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find(std::to_string(low) + " records LOST"),
            std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find(std::to_string(low) + " records of " + kTopic +
                           " were deleted"),
            std::string::npos)
      << err.str();
  // The dead-letter entry: one line in the state directory's log naming the
  // topic, partition, offsets and group.
  const std::string log = kafka::LostRecordsLogPath(state);
  EXPECT_NE(err.str().find("recorded in " + log), std::string::npos)
      << err.str();
  auto entries = kafka::ReadLostRecordsLog(log);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].lost.topic, kTopic);
  EXPECT_EQ((*entries)[0].lost.partition, 0);
  EXPECT_EQ((*entries)[0].lost.first_offset, 0);
  EXPECT_EQ((*entries)[0].lost.last_offset, low - 1);
  EXPECT_EQ((*entries)[0].group, options.group);
  EXPECT_EQ((*entries)[0].consumer, "buffer ingest");
  EXPECT_GT((*entries)[0].time_ms, 0);
  // The stored offset is past everything: running again reads nothing and
  // reports no loss.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunBufferIngest(path, options, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("ingested 0 episodes and 0 decisions"),
            std::string::npos)
      << out2.str();
  entries = kafka::ReadLostRecordsLog(log);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 1u);
  unsetenv("PHASELOOP_STATE_DIR");
}

// One consumer reads both topics; decisions shipped twice (a CI job that
// ran `decisions ship` again after a crash between delivery and marking)
// are stored once, and a second ingest reads nothing old again.
TEST(KafkaIngestTest, DecisionsShippedTwiceAreStoredOnceBesideEpisodes) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 2, 1).ok());
  ASSERT_TRUE((*cluster)->CreateTopic(kDecisions, 4, 1).ok());
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  const std::vector<v1::DecisionBatch> batches = DecisionBatches(3, 5);
  for (int round = 0; round < 2; ++round) {
    const std::vector<absl::Status> sent =
        ProduceDecisionBatches(bootstrap, Pointers(batches));
    ASSERT_EQ(sent.size(), 3u);
    for (const absl::Status& s : sent) EXPECT_TRUE(s.ok()) << s;
  }
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ProduceEpisodes(**producer, 0, 4);

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  IngestOptions options = QuickIngestOptions(bootstrap);
  options.decisions_topic = kDecisions;
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok());
  auto stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 34);
  EXPECT_EQ(stats->decisions, 30);
  EXPECT_EQ(stats->episodes, 4);
  EXPECT_EQ(stats->malformed, 0);
  auto decisions = (*store)->ReadDecisions(DecisionFilter());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_EQ(decisions->size(), 15u);
  DecisionFilter by_build;
  by_build.build_id = "build-1";
  EXPECT_EQ((*store)->ReadDecisions(by_build)->size(), 15u);
  auto offsets = (*store)->ReadOffsets(options.group, kDecisions);
  ASSERT_TRUE(offsets.ok());
  int64_t total = 0;
  for (const ConsumerOffset& o : *offsets) total += o.next_offset;
  EXPECT_EQ(total, 30);  // every decision record, committed with the rows

  // A third copy arrives later: read once more, still stored once.
  ASSERT_TRUE(ProduceDecisionBatches(bootstrap, Pointers(batches))[0].ok());
  stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 15);
  EXPECT_EQ((*store)->ReadDecisions(DecisionFilter())->size(), 15u);
}

// A bounded ingest (the canary's): stops once it has read to the end of
// the topic, well before its idle timeout.
TEST(KafkaIngestTest, ExitAtEndStopsAtTheEndOfTheTopic) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kDecisions, 4, 1).ok());
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  const std::vector<v1::DecisionBatch> batches = DecisionBatches(2, 4);
  for (const absl::Status& s :
       ProduceDecisionBatches(bootstrap, Pointers(batches))) {
    ASSERT_TRUE(s.ok()) << s;
  }
  IngestOptions options = QuickIngestOptions(bootstrap);
  options.topic = "";
  options.decisions_topic = kDecisions;
  options.exit_at_end = true;
  options.idle_exit = std::chrono::seconds(60);
  options.run_limit = std::chrono::seconds(90);
  auto store = OpenReplayStore(testing::MakeTempDir() + "/buffer.db");
  ASSERT_TRUE(store.ok());
  const auto start = std::chrono::steady_clock::now();
  auto stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->decisions, 8);
  EXPECT_EQ(stats->ended_by, "end");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(50));

  // Cut short by its run limit: it says so (the canary warns of it).
  options.group = "another-group";
  options.run_limit = std::chrono::milliseconds(1);
  stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->ended_by, "limit");
}

// Kafka unreachable: every batch fails (none counts as delivered).
// --exit-when-idle-ms against an address where no broker answers: the
// ingest never holds a partition; it waited for ever, and now fails after
// the grace, naming the address.
TEST(KafkaIngestTest, AnIdleIngestOfAnUnreachableClusterFails) {
  IngestOptions options = QuickIngestOptions("127.0.0.1:1");
  options.idle_exit = std::chrono::milliseconds(200);
  options.unassigned_grace = std::chrono::milliseconds(1500);
  auto store = OpenReplayStore(testing::MakeTempDir() + "/buffer.db");
  ASSERT_TRUE(store.ok());
  auto stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsUnavailable(stats.status())) << stats.status();
  EXPECT_NE(stats.status().message().find(
                "no Kafka broker at 127.0.0.1:1 answered the ingest"),
            std::string::npos)
      << stats.status();
}

// The idle time counts once the group has settled: joining it (the
// embedded cluster holds a first join about 3 s; a member that died holds
// a rebalance up for its session timeout) is not idling, and with a grace
// shorter than the join the records are still read (a first version ended
// such an ingest at the grace, 0 records read, exit 0).
TEST(KafkaIngestTest, AnIdleIngestWaitsForItsGroupToSettle) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 1, 1).ok());
  auto producer = ingest_test::MakeProducer((*cluster)->bootstrap_servers());
  ASSERT_NE(producer, nullptr);
  ProduceEpisodes(*producer, 0, 5);
  IngestOptions options = QuickIngestOptions((*cluster)->bootstrap_servers());
  options.decisions_topic = "";
  options.idle_exit = std::chrono::milliseconds(200);
  options.unassigned_grace = std::chrono::milliseconds(500);
  options.run_limit = std::chrono::seconds(60);
  auto store = OpenReplayStore(testing::MakeTempDir() + "/buffer.db");
  ASSERT_TRUE(store.ok());
  auto stats = RunKafkaIngest(**store, options, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 5);
  EXPECT_EQ(stats->ended_by, "idle");
}

TEST(KafkaIngestTest, ProducingToAnUnreachableClusterFailsEveryBatch) {
  const std::vector<v1::DecisionBatch> batches = DecisionBatches(2, 2);
  const std::vector<absl::Status> sent = ProduceDecisionBatches(
      "127.0.0.1:1", Pointers(batches), std::chrono::seconds(2));
  ASSERT_EQ(sent.size(), 2u);
  for (const absl::Status& s : sent) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(std::string(s.message()).find("127.0.0.1:1"), std::string::npos)
        << s;
  }
}

}  // namespace
}  // namespace phaseloop::replay_buffer
