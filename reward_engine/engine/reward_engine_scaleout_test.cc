// Engines scale out as a consumer group: two engines share an 8-partition
// phaseloop.sli, and every service still gets its relative (canary vs
// baseline) reward, because SLI windows are keyed by service and each
// service's groups are read by one engine.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "common/metrics/metrics_registry.h"
#include "reward_engine/engine/engine_test_util.h"
#include "reward_engine/engine/reward_engine.h"

namespace phaseloop::reward_engine {
namespace {

using testing::MakeSliWindow;

constexpr int kPartitions = 8;
const std::vector<std::string> kServices = {"checkout", "search", "cart",
                                            "auth",     "feed",   "ads"};

TEST(RewardEngineScaleOutTest, TwoEnginesGiveEveryServiceItsRelativeReward) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  ASSERT_TRUE((*cluster)->CreateTopic(kafka::kSliTopic, kPartitions, 1).ok());
  const std::string dir = kafka::testing::MakeTempDir();
  std::map<std::string, double> thresholds;
  for (const std::string& s : kServices) thresholds[s] = 100;
  testing::WriteSloDirectory(dir, thresholds);
  auto slos = slo::LoadSloDirectory(dir);
  ASSERT_TRUE(slos.ok()) << slos.status();

  EngineOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = "scaleout-test";
  // idle_ms 5 s: a partition whose records the engine has not fetched yet
  // is not mistaken for an idle one (which would let the others' watermark
  // close its windows first).
  options.windows = {10000, 0, 5000};
  options.slos = *slos;
  options.exit_when_idle = std::chrono::milliseconds(9000);
  options.consumer_config = kafka::testing::QuickGroupConfig();

  // Two engines, each with its own buffer, join the group first.
  std::vector<std::unique_ptr<replay_buffer::ReplayStore>> stores;
  for (int i = 0; i < 2; ++i) {
    auto store =
        replay_buffer::OpenReplayStore(absl::StrCat(dir, "/buffer", i, ".db"));
    ASSERT_TRUE(store.ok()) << store.status();
    stores.push_back(*std::move(store));
  }
  std::vector<absl::StatusOr<EngineStats>> stats(2,
                                                 absl::UnknownError("not run"));
  metrics::MetricsRegistry registries[2];
  std::vector<std::thread> engines;
  for (int i = 0; i < 2; ++i) {
    engines.emplace_back([&, i] {
      EngineOptions mine = options;
      mine.metrics = &registries[i];
      stats[i] = RunRewardEngine(*stores[i], mine, nullptr);
    });
  }
  // Produce once the group has settled: each engine reads some of the 8
  // partitions (its assigned-partitions gauge), so no rebalance moves a
  // partition mid-stream.
  auto assigned = [&](int i) {
    const std::string text = registries[i].RenderPrometheusText();
    const std::string series = "\nphaseloop_rewards_assigned_partitions ";
    const size_t at = text.find(series);
    return at == std::string::npos ? 0.0
                                   : std::stod(text.substr(at + series.size()));
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(assigned(0) > 0 && assigned(1) > 0 &&
           assigned(0) + assigned(1) == kPartitions) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(assigned(0), 0);
  ASSERT_GT(assigned(1), 0);

  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  std::vector<v1::SliWindow> windows;
  for (int64_t w = 0; w < 3; ++w) {
    for (const std::string& service : kServices) {
      for (const char* group : {"baseline", "canary"}) {
        const double base = std::string(group) == "canary" ? 0.06 : 0.05;
        windows.push_back(MakeSliWindow(service, group, "a", w * 10000, 10000,
                                        {base, base + 0.001, base + 0.002}));
      }
    }
  }
  testing::ProduceWindows(**producer, std::string(kafka::kSliTopic), windows);
  for (std::thread& t : engines) t.join();

  int64_t records = 0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(stats[i].ok()) << stats[i].status();
    EXPECT_EQ(stats[i]->dead_letters, 0);
    records += stats[i]->records;
  }
  EXPECT_GE(records, static_cast<int64_t>(windows.size()));
  // Both engines took part (else the test would not test scale-out).
  EXPECT_GT(stats[0]->records, 0);
  EXPECT_GT(stats[1]->records, 0);

  // Windows 0 and 1 closed for every service: each canary reward carries
  // its comparison with the baseline.
  const auto latest = testing::LatestPerKey(
      bootstrap, std::string(kafka::kRewardsTopic), std::chrono::seconds(2));
  for (const std::string& service : kServices) {
    for (int64_t w = 0; w < 2; ++w) {
      const std::string key =
          kafka::RewardKey(service, "canary", "dep-canary", w * 10000);
      ASSERT_EQ(latest.count(key), 1u) << key;
      v1::Reward reward;
      ASSERT_TRUE(reward.ParseFromString(latest.at(key)));
      EXPECT_TRUE(reward.has_relative_reward()) << key;
      EXPECT_LT(reward.relative_reward(), 0) << key;  // the canary is slower
    }
  }
}

// Two groups of one service sharing a deployment id and window get two
// reward keys (one overwrote the other on a compacted topic before).
TEST(RewardEngineScaleOutTest, RewardKeysSeparateGroupsOfOneDeployment) {
  EXPECT_NE(kafka::RewardKey("checkout", "baseline", "d1", 0),
            kafka::RewardKey("checkout", "canary", "d1", 0));
  EXPECT_EQ(kafka::RewardKey("checkout", "canary", "d1", 60000),
            "checkout/canary/d1/60000");
  EXPECT_EQ(kafka::BudgetKey("checkout", "canary", "latency"),
            "checkout/canary/latency");
  EXPECT_EQ(kafka::SliKey("checkout"), "checkout");
}

}  // namespace
}  // namespace phaseloop::reward_engine
