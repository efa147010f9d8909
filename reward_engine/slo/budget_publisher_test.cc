#include "reward_engine/slo/budget_publisher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/kafka/consumer.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "reward_engine/slo/budget_reader.h"
#include "reward_engine/slo/error_budget.h"

namespace phaseloop::slo {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kNow = int64_t{1700000000000};

Slo MakeSlo(const std::string& service, const std::string& name) {
  Slo slo;
  slo.name = name;
  slo.service = service;
  slo.threshold_ms = 250;
  slo.target = 0.99;
  slo.window_ms = 30 * 24 * 60 * kMinute;
  slo.budgeting_method = kOccurrences;
  return slo;
}

SloWindowObservation Window(const std::string& service,
                            const std::string& group, int64_t start,
                            int64_t total, int64_t good) {
  return {service, group, start, start + kMinute, total, good};
}

class BudgetPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::EmbeddedCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic(kafka::kBudgetTopic, 3, 1).ok());
  }
  std::unique_ptr<kafka::EmbeddedCluster> cluster_;
};

TEST_F(BudgetPublisherTest, PublishesKeyedStatusesAndTheReaderKeepsTheLatest) {
  ErrorBudgetTracker tracker(
      {MakeSlo("checkout", "latency"), MakeSlo("search", "latency")});
  tracker.Observe(Window("checkout", "canary", kNow - 3 * kMinute, 100, 90));
  tracker.Observe(Window("checkout", "baseline", kNow - 3 * kMinute, 100, 100));
  tracker.Observe(Window("search", "canary", kNow - 3 * kMinute, 100, 99));

  kafka::ProducerOptions options;
  options.bootstrap_servers = cluster_->bootstrap_servers();
  auto producer = kafka::Producer::Create(options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  BudgetPublisher publisher(**producer);
  ASSERT_TRUE(publisher.PublishAll(tracker.Status(kNow)).ok());
  // The canary recovers, then the statuses are published again.
  tracker.Observe(Window("checkout", "canary", kNow, 1000, 1000));
  ASSERT_TRUE(publisher.PublishAll(tracker.Status(kNow + kMinute)).ok());
  ASSERT_TRUE(publisher.Flush(milliseconds(10000)).ok());
  EXPECT_EQ((*producer)->stats().delivered, 6);

  // Keys are service/group/slo_name; values parse as BudgetStatus.
  kafka::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = cluster_->bootstrap_servers();
  consumer_options.group_id = "budget-publisher-test";
  auto consumer = kafka::Consumer::Create(consumer_options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE(
      (*consumer)
          ->AssignWithOffsets({{{std::string(kafka::kBudgetTopic), 0}, 0},
                               {{std::string(kafka::kBudgetTopic), 1}, 0},
                               {{std::string(kafka::kBudgetTopic), 2}, 0}})
          .ok());
  int seen = 0;
  for (int i = 0; i < 200 && seen < 6; ++i) {
    auto m = (*consumer)->Poll(milliseconds(50));
    ASSERT_TRUE(m.ok()) << m.status();
    if (!m->has_value()) continue;
    v1::BudgetStatus status;
    ASSERT_TRUE(status.ParseFromString((*m)->value));
    EXPECT_EQ((*m)->key, status.service() + "/" + status.group() + "/" +
                             status.slo_name());
    ++seen;
  }
  EXPECT_EQ(seen, 6);

  auto snapshot =
      ReadLatestBudgets(cluster_->bootstrap_servers(),
                        std::string(kafka::kBudgetTopic), milliseconds(20000));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->records, 6);
  EXPECT_EQ(snapshot->malformed, 0);
  ASSERT_EQ(snapshot->latest.size(), 3u);
  const v1::BudgetStatus& canary = snapshot->latest[1];
  EXPECT_EQ(canary.service(), "checkout");
  EXPECT_EQ(canary.group(), "canary");
  EXPECT_EQ(canary.as_of_ms(), kNow + kMinute);
  EXPECT_EQ(canary.total(), 1100);
  EXPECT_EQ(canary.bad(), 10);
  // 1 - 10 / (0.01 * 1100)
  EXPECT_NEAR(canary.error_budget_remaining(), 1 - 10.0 / 11, 1e-9);
  EXPECT_EQ(snapshot->latest[0].group(), "baseline");
  EXPECT_EQ(snapshot->latest[2].service(), "search");
}

TEST_F(BudgetPublisherTest, ReaderSkipsGarbageAndHandlesEmptyAndMissingTopics) {
  auto empty =
      ReadLatestBudgets(cluster_->bootstrap_servers(),
                        std::string(kafka::kBudgetTopic), milliseconds(10000));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->topic_exists);
  EXPECT_TRUE(empty->latest.empty());

  auto missing = ReadLatestBudgets(cluster_->bootstrap_servers(),
                                   "no.such.topic", milliseconds(10000));
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->topic_exists);

  kafka::ProducerOptions options;
  options.bootstrap_servers = cluster_->bootstrap_servers();
  auto producer = kafka::Producer::Create(options);
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE(
      (*producer)->Produce(kafka::kBudgetTopic, "x/y", "\xff\xff").ok());
  ASSERT_TRUE((*producer)->Flush(milliseconds(10000)).ok());
  auto snapshot =
      ReadLatestBudgets(cluster_->bootstrap_servers(),
                        std::string(kafka::kBudgetTopic), milliseconds(10000));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->records, 1);
  EXPECT_EQ(snapshot->malformed, 1);
  EXPECT_TRUE(snapshot->latest.empty());
}

TEST(BudgetReaderTest, UnreachableClusterIsAnError) {
  auto snapshot =
      ReadLatestBudgets("127.0.0.1:1", "phaseloop.budget", milliseconds(1500));
  ASSERT_FALSE(snapshot.ok());
  EXPECT_NE(snapshot.status().message().find("cannot reach the Kafka cluster "
                                             "at 127.0.0.1:1"),
            std::string::npos)
      << snapshot.status();
}

}  // namespace
}  // namespace phaseloop::slo
