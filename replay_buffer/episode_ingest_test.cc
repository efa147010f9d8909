// Episodes through a real Kafka protocol broker (the embedded cluster on
// loopback) into the buffer: every episode once, malformed records skipped,
// a restart resumes from the offsets stored with the rows.
#include "replay_buffer/episode_ingest.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/kafka/delivery_spool.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/producer.h"
#include "common/kafka/state_dir.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "replay_buffer/buffer_command.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

constexpr char kTopic[] = "phaseloop.search.episodes";

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

// Ingest of kTopic that stops 2.5 s after the last record, in a quickly
// settling consumer group.
IngestOptions QuickIngestOptions(const std::string& bootstrap) {
  IngestOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = kTopic;
  options.idle_exit = std::chrono::milliseconds(2500);
  options.consumer_config = kafka::testing::QuickGroupConfig();
  return options;
}

TEST(EpisodeIngestTest, StoresEveryEpisodeOnceAndResumesFromStoredOffsets) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 4, 1).ok());
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = (*cluster)->bootstrap_servers();
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();

  ProduceEpisodes(**producer, 0, 40);
  ASSERT_TRUE((*producer)->Produce(kTopic, "junk", "not an episode").ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());

  const std::string path = testing::MakeTempDir() + "/buffer.db";
  const IngestOptions options =
      QuickIngestOptions((*cluster)->bootstrap_servers());
  {
    auto store = OpenReplayStore(path);
    ASSERT_TRUE(store.ok());
    auto stats = RunEpisodeIngest(**store, options, nullptr, nullptr);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->episodes, 40);
    EXPECT_EQ(stats->malformed, 1);
  }
  // More episodes, and ten old ones again (a producer retrying after a
  // timeout): the second run reads only what is new and upserts.
  ProduceEpisodes(**producer, 40, 20);
  ProduceEpisodes(**producer, 0, 10);
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok());
  auto stats = RunEpisodeIngest(**store, options, nullptr, nullptr);
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
  EXPECT_EQ(total, 71);  // every record of the topic, committed with rows
}

// More than the embedded cluster keeps of one partition (10 MB of
// non-episode records, then 20 episodes): `buffer ingest` stores what is
// left, names the deleted offsets on stderr and exits 1.
TEST(EpisodeIngestTest, BufferIngestReportsRecordsDeletedBeforeItReadThem) {
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
  EXPECT_NE(out.str().find("ingested 20 episodes from " +
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
  EXPECT_NE(out2.str().find("ingested 0 episodes"), std::string::npos)
      << out2.str();
  entries = kafka::ReadLostRecordsLog(log);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 1u);
  unsetenv("PHASELOOP_STATE_DIR");
}

// A malformed record's dead letter that Kafka refuses is kept in the state
// directory's spool (never dropped) and delivered first by the next run.
TEST(EpisodeIngestTest, DeadLettersKafkaRefusesAreKeptForTheNextRun) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic(kTopic, 1, 1).ok());
  ASSERT_TRUE(
      (*cluster)->CreateTopic(std::string(kafka::kDeadLetterTopic), 1, 1).ok());
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ProduceEpisodes(**producer, 0, 3);
  ASSERT_TRUE((*producer)->Produce(kTopic, "junk", "not an episode").ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  // The next produce request (the dead letter's) is refused for good.
  ASSERT_TRUE(
      (*cluster)
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
  const std::string spool_dir = kafka::SpoolDirPath(state, "dead-letters");
  EXPECT_NE(err.str().find("kept for retry in " + spool_dir), std::string::npos)
      << err.str();
  auto spool = kafka::DeliverySpool::Open(spool_dir);
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto kept = spool->Records();
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].topic, kafka::kDeadLetterTopic);
  EXPECT_EQ((*kept)[0].value, "not an episode");
  EXPECT_EQ(kafka::testing::Watermarks(bootstrap,
                                       std::string(kafka::kDeadLetterTopic), 0)
                .second,
            0);

  // The next run delivers it first, once; the spool is empty after.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunBufferIngest(path, options, out2, err2), 0) << err2.str();
  EXPECT_NE(err2.str().find("1 dead letters of an earlier run delivered"),
            std::string::npos)
      << err2.str();
  kept = spool->Records();
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->empty());
  EXPECT_EQ(kafka::testing::Watermarks(bootstrap,
                                       std::string(kafka::kDeadLetterTopic), 0)
                .second,
            1);
  unsetenv("PHASELOOP_STATE_DIR");
}

}  // namespace
}  // namespace phaseloop::replay_buffer
