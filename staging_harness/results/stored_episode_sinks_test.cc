#include "staging_harness/results/stored_episode_sinks.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"

namespace phaseloop::search {
namespace {

// The broker is down when a job's episodes are flushed: they are kept in
// the spool (Flush succeeds: they are on disk), and the next sink, with the
// broker back, delivers each of them exactly once before anything else.
TEST(KafkaEpisodeSinkTest, UnacknowledgedEpisodesAreSpooledThenDelivered) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  const std::string topic = "episodes";
  ASSERT_TRUE((*cluster)->CreateTopic(topic, 1, 1).ok());
  const std::string spool = kafka::testing::MakeTempDir() + "/spool/episodes";
  ASSERT_TRUE((*cluster)->SetBrokerDown(kafka::kAllBrokers).ok());
  {
    auto sink = KafkaEpisodeSink::Create(bootstrap, topic, spool);
    ASSERT_TRUE(sink.ok()) << sink.status();
    for (int i = 0; i < 3; ++i) {
      v1::Episode episode;
      episode.set_episode_id(absl::StrCat("e", i));
      episode.set_module_hash("m");
      ASSERT_TRUE((*sink)->Write(episode).ok());
    }
    // Within Flush's 60 s the broker stays down; the records are purged
    // into the spool at the end of it.
    absl::Status flushed = (*sink)->Flush();
    EXPECT_TRUE(flushed.ok()) << flushed;
    EXPECT_EQ((*sink)->kept_for_retry(), 3);
  }
  ASSERT_TRUE((*cluster)->SetBrokerUp(kafka::kAllBrokers).ok());
  {
    auto sink = KafkaEpisodeSink::Create(bootstrap, topic, spool);
    ASSERT_TRUE(sink.ok()) << sink.status();
    EXPECT_EQ((*sink)->spool_retry().delivered, 3);
    EXPECT_EQ((*sink)->spool_retry().kept, 0);
  }
  EXPECT_EQ(kafka::testing::Watermarks(bootstrap, topic, 0),
            std::make_pair(int64_t{0}, int64_t{3}));
}

}  // namespace
}  // namespace phaseloop::search
