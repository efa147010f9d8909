#include "canary/service/sli_delivery.h"

#include <string>
#include <vector>

#include "common/kafka/delivery_spool.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/topic_reader.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

v1::SliWindow Window(int64_t start_ms) {
  v1::SliWindow window;
  window.set_service("demo");
  window.set_group("canary");
  window.set_instance("test:1");
  window.set_window_start_ms(start_ms);
  window.set_window_length_ms(1000);
  window.set_count(3);
  return window;
}

std::vector<v1::SliWindow> ReadWindows(const std::string& bootstrap) {
  std::vector<v1::SliWindow> windows;
  kafka::TopicReadOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = std::string(kafka::kSliTopic);
  options.client_id = "sli-delivery-test";
  auto read = kafka::ReadTopicToEnd(options, [&](const auto& message) {
    EXPECT_EQ(message.key, kafka::SliKey("demo"));
    v1::SliWindow window;
    EXPECT_TRUE(window.ParseFromString(message.value));
    windows.push_back(window);
  });
  EXPECT_TRUE(read.ok()) << read.status();
  return windows;
}

TEST(SliDeliveryTest, DeliversEachWindowToKafka) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  SliDeliveryOptions options;
  options.bootstrap_servers = (*cluster)->bootstrap_servers();
  options.topic = std::string(kafka::kSliTopic);
  options.spool_dir = testing::MakeTempDir() + "/spool";
  auto delivery = SliDelivery::Create(options);
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  for (int64_t start : {1000, 2000, 3000}) {
    ASSERT_TRUE((*delivery)->Publish(Window(start)).ok());
  }
  EXPECT_EQ((*delivery)->stats().delivered, 3);
  EXPECT_EQ((*delivery)->stats().spooled, 0);
  const std::vector<v1::SliWindow> windows =
      ReadWindows((*cluster)->bootstrap_servers());
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].count(), 3);
}

TEST(SliDeliveryTest, UndeliveredWindowsAreSpooledThenDeliveredByTheNextRun) {
  const std::string spool_dir = testing::MakeTempDir() + "/spool";
  SliDeliveryOptions options;
  options.bootstrap_servers = "127.0.0.1:1";  // nothing listens there
  options.topic = std::string(kafka::kSliTopic);
  options.spool_dir = spool_dir;
  options.delivery_timeout = std::chrono::milliseconds(300);
  {
    auto delivery = SliDelivery::Create(options);
    ASSERT_TRUE(delivery.ok()) << delivery.status();
    // The first waits for its delivery timeout; the second is spooled at
    // once (backoff).
    ASSERT_TRUE((*delivery)->Publish(Window(1000)).ok());
    ASSERT_TRUE((*delivery)->Publish(Window(2000)).ok());
    EXPECT_EQ((*delivery)->stats().delivered, 0);
    EXPECT_EQ((*delivery)->stats().spooled, 2);
  }
  auto spool = kafka::DeliverySpool::Open(spool_dir);
  ASSERT_TRUE(spool.ok());
  auto records = spool->Records();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].topic, kafka::kSliTopic);

  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  options.bootstrap_servers = (*cluster)->bootstrap_servers();
  options.delivery_timeout = std::chrono::milliseconds(10000);
  auto next = SliDelivery::Create(options);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ((*next)->stats().spool_redelivered, 2);
  EXPECT_EQ((*next)->stats().spool_kept, 0);
  const std::vector<v1::SliWindow> windows =
      ReadWindows((*cluster)->bootstrap_servers());
  ASSERT_EQ(windows.size(), 2u);
  auto left = spool->Records();
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

TEST(SliDeliveryTest, NeedsABootstrapAndASpool) {
  SliDeliveryOptions options;
  options.spool_dir = testing::MakeTempDir();
  EXPECT_EQ(SliDelivery::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.bootstrap_servers = "127.0.0.1:1";
  options.spool_dir = "";
  EXPECT_EQ(SliDelivery::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace phaseloop::canary
