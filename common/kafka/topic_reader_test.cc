#include "common/kafka/topic_reader.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

TopicReadOptions Options(const std::string& bootstrap,
                         const std::string& topic) {
  TopicReadOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = topic;
  options.client_id = "topic-reader-test";
  options.timeout = std::chrono::seconds(20);
  return options;
}

// Every record produced before the read, each once, in partition order;
// records produced afterwards are not waited for.
TEST(TopicReaderTest, ReadsEveryRecordUpToTheEndOnce) {
  auto cluster = EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  ASSERT_TRUE((*cluster)->CreateTopic("t", 3, 1).ok());
  ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE((*producer)
                    ->Produce("t", absl::StrCat("k", i % 5), absl::StrCat(i))
                    .ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(20)).ok());

  std::map<int32_t, std::vector<int>> by_partition;
  auto read =
      ReadTopicToEnd(Options(bootstrap, "t"), [&](const ConsumedMessage& m) {
        by_partition[m.partition].push_back(std::stoi(m.value));
      });
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->topic_exists);
  EXPECT_EQ(read->records, 30);
  int total = 0;
  for (const auto& [partition, values] : by_partition) {
    total += static_cast<int>(values.size());
    for (size_t i = 1; i < values.size(); ++i) {
      EXPECT_LT(values[i - 1], values[i]);  // production order per partition
    }
  }
  EXPECT_EQ(total, 30);
}

TEST(TopicReaderTest, AnAbsentTopicIsEmptyAndNotCreated) {
  auto cluster = EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  int calls = 0;
  auto read = ReadTopicToEnd(Options((*cluster)->bootstrap_servers(), "absent"),
                             [&](const ConsumedMessage&) { ++calls; });
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->topic_exists);
  EXPECT_EQ(read->records, 0);
  EXPECT_EQ(calls, 0);
  auto again =
      ReadTopicToEnd(Options((*cluster)->bootstrap_servers(), "absent"),
                     [&](const ConsumedMessage&) { ++calls; });
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->topic_exists);  // the first read did not create it
}

TEST(TopicReaderTest, AnUnreachableClusterIsNamed) {
  TopicReadOptions options = Options("127.0.0.1:1", "t");
  options.timeout = std::chrono::milliseconds(500);
  auto read = ReadTopicToEnd(options, [](const ConsumedMessage&) {});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(read.status().message().find(
                "cannot reach the Kafka cluster at 127.0.0.1:1"),
            std::string::npos)
      << read.status();
}

}  // namespace
}  // namespace phaseloop::kafka
