#include "reward_engine/engine/reward_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/test_util.h"
#include "common/metrics/metrics_registry.h"
#include "reward_engine/engine/engine_checkpoint.h"
#include "reward_engine/engine/engine_test_util.h"
#include "reward_engine/sli/latency_sketch.h"

namespace phaseloop::reward_engine {
namespace {

using testing::MakeSliWindow;

class RewardEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartCluster());
    dir_ = kafka::testing::MakeTempDir();
    testing::WriteSloDirectory(dir_, {{"checkout", 100}});
    auto slos = slo::LoadSloDirectory(dir_);
    ASSERT_TRUE(slos.ok()) << slos.status();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_.group_id = "engine-test";
    options_.windows = {10000, 0, 500};
    options_.slos = *slos;
    options_.exit_when_idle = std::chrono::milliseconds(2500);
    // These tests stop with windows still open to exercise restarts; the
    // close at a drained exit has its own test below.
    options_.close_drained_windows = false;
    options_.close_idle_after = std::chrono::milliseconds(0);
    options_.consumer_config = kafka::testing::QuickGroupConfig();
  }

  // A new embedded cluster (the one before, if any, gone with all it held)
  // with the SLI topic, the engine's options and the producer pointed at
  // it; the buffer stays.
  void StartCluster() {
    producer_.reset();
    auto cluster = kafka::EmbeddedCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    // One SLI partition: arrival order is event order, so what is late is
    // fixed by the input.
    ASSERT_TRUE(cluster_->CreateTopic(kafka::kSliTopic, 1, 1).ok());
    options_.bootstrap_servers = cluster_->bootstrap_servers();
    kafka::ProducerOptions producer_options;
    producer_options.bootstrap_servers = cluster_->bootstrap_servers();
    auto producer = kafka::Producer::Create(producer_options);
    ASSERT_TRUE(producer.ok()) << producer.status();
    producer_ = *std::move(producer);
  }

  // SLI windows of 5 s for `window` (10 s): 2 instances x 2 groups x 2.
  std::vector<v1::SliWindow> Window(int64_t window) {
    std::vector<v1::SliWindow> out;
    for (int64_t half : {0, 5000}) {
      for (const char* group : {"baseline", "canary"}) {
        for (const char* instance : {"a", "b"}) {
          const double base = std::string(group) == "canary" ? 0.06 : 0.05;
          std::vector<double> latencies;
          for (int i = 0; i < 50; ++i) {
            latencies.push_back(base + 0.001 * ((i * 7 + window) % 50));
          }
          out.push_back(MakeSliWindow("checkout", group, instance,
                                      window * 10000 + half, 5000, latencies,
                                      window % 2));
        }
      }
    }
    return out;
  }

  void Produce(const std::vector<v1::SliWindow>& windows) {
    testing::ProduceWindows(*producer_, std::string(kafka::kSliTopic), windows);
  }
  void ProduceRaw(const std::string& key, const std::string& value) {
    ASSERT_TRUE(producer_->Produce(kafka::kSliTopic, key, value).ok());
    ASSERT_TRUE(producer_->Flush(std::chrono::seconds(10)).ok());
  }

  std::unique_ptr<kafka::EmbeddedCluster> cluster_;
  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  std::unique_ptr<kafka::Producer> producer_;
  EngineOptions options_;
};

TEST_F(RewardEngineTest, RewardsLateDeadLettersDuplicatesAndRestart) {
  for (int64_t w = 0; w < 4; ++w) Produce(Window(w));
  // A producer retry's duplicate, bad input, and a late window.
  Produce({Window(3)[0]});
  ProduceRaw("checkout", "not a proto");
  Produce({MakeSliWindow("search", "canary", "a", 30000, 5000, {0.01})});
  Produce({MakeSliWindow("checkout", "canary", "z", 0, 5000, {0.01})});
  Produce(Window(4));

  metrics::MetricsRegistry registry;
  options_.metrics = &registry;
  auto stats = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 5 * 8 + 4);
  EXPECT_EQ(stats->merged, 5 * 8);
  EXPECT_EQ(stats->duplicates, 1);
  EXPECT_EQ(stats->dead_letters, 2);
  EXPECT_EQ(stats->late, 1);
  // Windows 0..3 closed (all partitions idle: watermark = newest event,
  // the last millisecond of window 4's SLI windows, 49999, so window 4
  // stays open: lateness 0 lets its other instances' windows ending there
  // still come).
  EXPECT_EQ(stats->windows_closed, 4);
  EXPECT_EQ(stats->rewards, 8);
  EXPECT_EQ(stats->watermark_ms, 49999);

  // The buffer: one FinalReward per (group, window), value log(SLO / p95)
  // of the merged sketch of that group's 4 SLI windows.
  std::map<std::string, std::string> buffer = testing::BufferRewards(*store_);
  ASSERT_EQ(buffer.size(), 8u);
  for (int64_t w = 0; w < 4; ++w) {
    sli::LatencySketch merged;
    for (const v1::SliWindow& s : Window(w)) {
      if (s.group() != "canary") continue;
      ASSERT_TRUE(
          merged.Merge(*sli::LatencySketch::FromProto(s.sketch())).ok());
    }
    const std::string id =
        absl::StrCat("canary/checkout/dep-canary/", w * 10000, "/canary");
    ASSERT_EQ(buffer.count(id), 1u) << id;
    v1::FinalReward reward;
    ASSERT_TRUE(reward.ParseFromString(buffer[id]));
    EXPECT_DOUBLE_EQ(reward.value(), std::log(0.1 / *merged.Quantile(0.95)));
    EXPECT_EQ(reward.policy_version(), "pol-canary");
  }
  // The canary's relative rewards, as a controller reads them back.
  replay_buffer::RewardFilter relative;
  relative.source = "canary";
  relative.deployment_id = "dep-canary";
  relative.relative_only = true;
  auto canary_rewards = store_->ReadFinalRewards(relative);
  ASSERT_TRUE(canary_rewards.ok()) << canary_rewards.status();
  ASSERT_EQ(canary_rewards->size(), 4u);
  for (size_t w = 0; w < 4; ++w) {
    const v1::FinalReward& r = (*canary_rewards)[w];
    EXPECT_EQ(r.window_start_ms(), static_cast<int64_t>(w) * 10000);
    ASSERT_TRUE(r.has_relative_value());
    EXPECT_LT(r.relative_value(), 0);  // the canary is slower
    EXPECT_EQ(r.baseline_deployment_id(), "dep-baseline");
  }
  // The rewards topic holds the same rewards, keyed.
  auto latest = testing::LatestPerKey(cluster_->bootstrap_servers(),
                                      std::string(kafka::kRewardsTopic),
                                      std::chrono::seconds(2));
  ASSERT_EQ(latest.size(), 8u);
  v1::Reward canary;
  ASSERT_TRUE(
      canary.ParseFromString(latest.at("checkout/canary/dep-canary/20000")));
  EXPECT_EQ(canary.count(), 200);
  EXPECT_EQ(canary.sli_windows(), 4);
  EXPECT_TRUE(canary.has_relative_reward());
  EXPECT_LT(canary.relative_reward(), 0);  // the canary is slower
  EXPECT_DOUBLE_EQ((*canary_rewards)[2].relative_value(),
                   canary.relative_reward());  // the same figure in both
  EXPECT_EQ(canary.error_count(), 0);
  // Side topics.
  auto dead = testing::ReadAll(cluster_->bootstrap_servers(),
                               std::string(kafka::kDeadLetterTopic),
                               std::chrono::seconds(2));
  ASSERT_EQ(dead.size(), 2u);
  std::set<std::string> reasons;
  for (const auto& m : dead) {
    v1::DeadLetter letter;
    ASSERT_TRUE(letter.ParseFromString(m.value));
    reasons.insert(letter.reason().substr(0, letter.reason().find(':')));
    EXPECT_EQ(letter.source_topic(), kafka::kSliTopic);
    EXPECT_EQ(m.key, letter.key());
  }
  EXPECT_EQ(reasons, (std::set<std::string>{"malformed", "unknown_service"}));
  auto late = testing::ReadAll(cluster_->bootstrap_servers(),
                               std::string(kafka::kRewardsLateTopic),
                               std::chrono::seconds(2));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].key, "checkout");
  auto budget = testing::LatestPerKey(cluster_->bootstrap_servers(),
                                      std::string(kafka::kBudgetTopic),
                                      std::chrono::seconds(2));
  EXPECT_EQ(budget.count("checkout/baseline/checkout-latency"), 1u);
  EXPECT_EQ(budget.count("checkout/canary/checkout-latency"), 1u);
  // Metrics.
  const std::string text = registry.RenderPrometheusText();
  EXPECT_NE(text.find("phaseloop_rewards_emitted_total 8"), std::string::npos)
      << text;
  EXPECT_NE(text.find("phaseloop_rewards_late_events_total 1"),
            std::string::npos);
  EXPECT_NE(text.find("phaseloop_rewards_duplicates_dropped_total 1"),
            std::string::npos);
  EXPECT_NE(
      text.find("phaseloop_rewards_dead_letters_total{reason=\"malformed\"} 1"),
      std::string::npos);
  EXPECT_NE(text.find("phaseloop_rewards_consumer_lag{partition=\"0\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("phaseloop_rewards_windows_closed_total 4"),
            std::string::npos);

  // The checkpoint keeps window 4's records (offset 44 on) for a restart.
  auto checkpoints =
      ReadCheckpoints(*store_, "engine-test", std::string(kafka::kSliTopic));
  ASSERT_TRUE(checkpoints.ok());
  EXPECT_EQ(checkpoints->at(0), (PartitionCheckpoint{36, 44, 49999}));

  // Restart with one more window: window 4 is rebuilt from the re-read
  // records and closes; the late record and dead letters read before are
  // not produced again.
  Produce(Window(5));
  options_.metrics = nullptr;
  auto again = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->replayed, 0);  // offsets 36..43 are window 4's
  EXPECT_EQ(again->merged, 16);
  EXPECT_EQ(again->late, 0);
  EXPECT_EQ(again->dead_letters, 0);
  EXPECT_EQ(again->rewards, 2);
  buffer = testing::BufferRewards(*store_);
  EXPECT_EQ(buffer.size(), 10u);
  v1::FinalReward w4;
  ASSERT_TRUE(
      w4.ParseFromString(buffer.at("canary/checkout/dep-canary/40000/canary")));
  sli::LatencySketch merged;
  for (const v1::SliWindow& s : Window(4)) {
    if (s.group() == "canary") {
      ASSERT_TRUE(
          merged.Merge(*sli::LatencySketch::FromProto(s.sketch())).ok());
    }
  }
  EXPECT_DOUBLE_EQ(w4.value(), std::log(0.1 / *merged.Quantile(0.95)));
  EXPECT_EQ(testing::ReadAll(cluster_->bootstrap_servers(),
                             std::string(kafka::kRewardsLateTopic),
                             std::chrono::seconds(2))
                .size(),
            1u);
}

// The error budgets a restarted engine publishes equal an uninterrupted
// run's: its tracker is seeded from the rewards topic. Each run reads its
// own SLI topic and writes its own rewards and budget topics.
TEST_F(RewardEngineTest, RestartPublishesTheBudgetsOfAnUninterruptedRun) {
  auto run = [&](const std::string& name, int64_t from, int64_t to,
                 bool seed) -> absl::StatusOr<EngineStats> {
    const std::string sli = "sli." + name;
    if (from == 0) (void)cluster_->CreateTopic(sli, 1, 1);
    std::vector<v1::SliWindow> windows;
    for (int64_t w = from; w < to; ++w) {
      for (v1::SliWindow& s : Window(w)) windows.push_back(std::move(s));
    }
    testing::ProduceWindows(*producer_, sli, windows);
    auto store = replay_buffer::OpenReplayStore(dir_ + "/" + name + ".db");
    if (!store.ok()) return store.status();
    EngineOptions options = options_;
    options.group_id = "group." + name;
    options.sli_topic = sli;
    options.rewards_topic = "rewards." + name;
    options.budget_topic = "budget." + name;
    options.seed_budget_history = seed;
    options.exit_when_idle = std::chrono::milliseconds(1500);
    return RunRewardEngine(**store, options, nullptr);
  };
  auto budgets = [&](const std::string& name) {
    return testing::LatestPerKey(cluster_->bootstrap_servers(),
                                 "budget." + name, std::chrono::seconds(2));
  };
  auto whole = run("whole", 0, 6, true);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->windows_closed, 5);  // window 5 stays open
  EXPECT_EQ(whole->history_windows, 0);

  // Stopped after windows 0..2 were read (0 and 1 closed), then restarted
  // as a new process would be (a fresh tracker) with 3..5 added.
  for (const auto& [name, seed] :
       {std::pair{"restarted", true}, std::pair{"unseeded", false}}) {
    auto first = run(name, 0, 3, true);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->windows_closed, 2);
    auto second = run(name, 3, 6, seed);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->windows_closed, 3);
    // Two groups x windows 0 and 1.
    EXPECT_EQ(second->history_windows, seed ? 4 : 0);
  }
  const auto expected = budgets("whole");
  ASSERT_EQ(expected.count("checkout/canary/checkout-latency"), 1u);
  EXPECT_EQ(budgets("restarted"), expected);
  // Without the seeding the budgets forget windows 0 and 1 (the check
  // above can fail).
  EXPECT_NE(budgets("unseeded"), expected);
}

// The buffer outlives the cluster: a new embedded cluster (it keeps
// nothing), the same buffer and group, as when `canary run` resumes. The SLI
// topic's offsets start at 0 again, below the stored checkpoint's; its
// windows close on their own data, not once the new log has grown past the
// old one's read_through.
TEST_F(RewardEngineTest, CheckpointOfAnEarlierClusterHoldsNoWindowBack) {
  for (int64_t w = 0; w < 6; ++w) Produce(Window(w));
  auto first = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->windows_closed, 5);
  auto stored =
      ReadCheckpoints(*store_, "engine-test", std::string(kafka::kSliTopic));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->at(0).read_through, 48);

  ASSERT_NO_FATAL_FAILURE(StartCluster());
  for (int64_t w = 10; w < 13; ++w) Produce(Window(w));  // offsets 0..23
  std::ostringstream progress;
  options_.progress = &progress;
  auto second = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->records, 24);
  EXPECT_EQ(second->windows_closed, 2) << progress.str();  // window 12 open
  EXPECT_EQ(second->late, 0);
  EXPECT_EQ(second->watermark_ms, 129999);
  EXPECT_NE(progress.str().find("the topic was recreated"), std::string::npos)
      << progress.str();
  // The stored checkpoint is now this log's, lower as it is than the
  // other's (window 12, offsets 16..23, still open).
  stored =
      ReadCheckpoints(*store_, "engine-test", std::string(kafka::kSliTopic));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->at(0).next_offset, 16);
  EXPECT_EQ(stored->at(0).read_through, 24);

  // A restart once this log has grown past the other's read_through (48)
  // resumes at 16, not at the other log's 40: window 12 closes whole.
  for (int64_t w = 13; w < 20; ++w) Produce(Window(w));  // offsets 24..79
  auto third = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->records, 64);
  EXPECT_EQ(third->windows_closed, 7) << progress.str();  // 12..18
  EXPECT_EQ(third->late, 0);
}

// The new log reaches the old checkpoint's next offset (40) but not its
// read_through (48): the consumer, placed at 40, is moved to the log's
// start, so windows 10..14 (offsets 0..39) are read and closed.
TEST_F(RewardEngineTest, ACheckpointInsideARecreatedLogReadsItFromItsStart) {
  for (int64_t w = 0; w < 6; ++w) Produce(Window(w));
  auto first = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  auto stored =
      ReadCheckpoints(*store_, "engine-test", std::string(kafka::kSliTopic));
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->at(0).next_offset, 40);
  ASSERT_EQ(stored->at(0).read_through, 48);

  ASSERT_NO_FATAL_FAILURE(StartCluster());
  for (int64_t w = 10; w < 15; ++w) Produce(Window(w));  // offsets 0..39
  const std::vector<v1::SliWindow> next = Window(15);
  Produce({next[0], next[1]});  // 40, 41: the log ends at 42
  std::ostringstream progress;
  options_.progress = &progress;
  auto second = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->windows_closed, 5) << progress.str();  // 10..14
  EXPECT_EQ(second->late, 0);
  EXPECT_NE(progress.str().find("from its start"), std::string::npos)
      << progress.str();
}

// `rewards run --exit-when-idle-ms` on a finished stream: the last window,
// which no later event will ever close, gives its rewards at exit (its end
// is long past on the wall clock), and the checkpoint says so: a record of
// it read by the next run is late.
TEST_F(RewardEngineTest, DrainedExitClosesTheWindowsTheWallClockHasPassed) {
  for (int64_t w = 0; w < 3; ++w) Produce(Window(w));
  options_.close_drained_windows = true;
  auto stats = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->windows_closed, 3);
  EXPECT_EQ(stats->rewards, 6);
  EXPECT_EQ(stats->watermark_ms, 30000);
  EXPECT_EQ(testing::BufferRewards(*store_).size(), 6u);
  auto checkpoints =
      ReadCheckpoints(*store_, "engine-test", std::string(kafka::kSliTopic));
  ASSERT_TRUE(checkpoints.ok());
  EXPECT_EQ(checkpoints->at(0), (PartitionCheckpoint{24, 24, 30000}));

  Produce({MakeSliWindow("checkout", "canary", "z", 25000, 5000, {0.01})});
  auto again = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->late, 1);
  EXPECT_EQ(again->rewards, 0);
  // Without the drained close the last window waits (the old behaviour).
  options_.close_drained_windows = false;
  options_.group_id = "engine-test-open";
  auto open = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(open->windows_closed, 2);
}

// A second engine with a longer window over the same SLIs and buffer: its
// first window's rewards have the ids of the first engine's, for other
// requests. It stops before producing or storing them, naming the length
// the buffer holds.
TEST_F(RewardEngineTest, AnotherWindowLengthDoesNotReplaceStoredRewards) {
  for (int64_t w = 0; w < 3; ++w) Produce(Window(w));
  options_.close_drained_windows = true;
  auto first = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->rewards, 6);
  const std::map<std::string, std::string> before =
      testing::BufferRewards(*store_);

  options_.group_id = "engine-test-20s";
  options_.windows.window_ms = 20000;
  auto second = RunRewardEngine(*store_, options_, nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_NE(second.status().message().find("--window-ms 10000"),
            std::string::npos)
      << second.status();
  EXPECT_EQ(testing::BufferRewards(*store_), before);
}

// A running engine whose input goes quiet: the newest window, which no
// later window's data will close, gives its rewards once no record came for
// close_idle_after and its end plus the lateness is past on the wall clock.
TEST_F(RewardEngineTest, QuietInputClosesTheNewestWindowWhileRunning) {
  options_.exit_when_idle = std::chrono::milliseconds(0);  // run until stop
  options_.close_idle_after = std::chrono::milliseconds(500);
  options_.windows.lateness_ms = 1000;
  // A window that ended a little before now, on the wall clock.
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  const int64_t start = (now_ms / 10000 - 1) * 10000;
  std::vector<v1::SliWindow> windows;
  for (int64_t half : {0, 5000}) {
    for (const char* group : {"baseline", "canary"}) {
      windows.push_back(MakeSliWindow("checkout", group, "a", start + half,
                                      5000, {0.05, 0.06, 0.07}));
    }
  }
  Produce(windows);
  std::atomic<bool> stop{false};
  absl::StatusOr<EngineStats> stats;
  std::thread engine(
      [&] { stats = RunRewardEngine(*store_, options_, &stop); });
  auto reader = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<std::string, std::string> rewards;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (rewards.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rewards = testing::BufferRewards(**reader);
  }
  stop = true;
  engine.join();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(rewards.size(), 2u);
  EXPECT_EQ(rewards.count(
                absl::StrCat("canary/checkout/dep-canary/", start, "/canary")),
            1u);
  EXPECT_EQ(stats->windows_closed, 1);
  EXPECT_EQ(stats->watermark_ms, start + 10000);
}

// SLI records deleted by the embedded cluster's retention before the engine
// read them (10 MB of junk, then real windows): counted in the stats and
// phaseloop_rewards_records_lost_total, logged with the offsets, and the
// rest is processed.
TEST_F(RewardEngineTest, CountsRecordsDeletedBeforeItReadThem) {
  const std::string topic(kafka::kSliTopic);
  kafka::testing::ProduceBulk(cluster_->bootstrap_servers(), topic, 160,
                              64 * 1024);
  Produce(Window(0));
  auto [low, high] =
      kafka::testing::Watermarks(cluster_->bootstrap_servers(), topic, 0);
  ASSERT_GT(low, 0);
  metrics::MetricsRegistry registry;
  options_.metrics = &registry;
  std::ostringstream progress;
  options_.progress = &progress;
  options_.lost_records_log = kafka::LostRecordsLogPath(dir_ + "/state");
  auto stats = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records_lost, low);
  // The dead-letter entry an operator finds later, naming the gap.
  auto entries = kafka::ReadLostRecordsLog(options_.lost_records_log);
  ASSERT_TRUE(entries.ok()) << entries.status() << progress.str();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].lost.topic, topic);
  EXPECT_EQ((*entries)[0].lost.partition, 0);
  EXPECT_EQ((*entries)[0].lost.first_offset, 0);
  EXPECT_EQ((*entries)[0].lost.last_offset, low - 1);
  EXPECT_EQ((*entries)[0].group, options_.group_id);
  EXPECT_EQ((*entries)[0].consumer, "reward engine");
  EXPECT_EQ(stats->records, high - low);
  EXPECT_NE(progress.str().find("records lost: " + topic + "/0 offsets 0.." +
                                std::to_string(low - 1)),
            std::string::npos)
      << progress.str();
  EXPECT_NE(registry.RenderPrometheusText().find(
                "phaseloop_rewards_records_lost_total{partition=\"0\"} " +
                std::to_string(low)),
            std::string::npos)
      << registry.RenderPrometheusText();
}

// Records an earlier run could not deliver (kept in the spool) are
// produced first at start-up, once, and leave the spool.
TEST_F(RewardEngineTest, DeliversWhatAnEarlierRunSpooledFirst) {
  ASSERT_TRUE(cluster_->CreateTopic("spooled-output", 1, 1).ok());
  options_.spool_dir = kafka::SpoolDirPath(dir_ + "/state", "rewards");
  {
    auto spool = kafka::DeliverySpool::Open(options_.spool_dir);
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE(spool->Keep({{"spooled-output", "k", "kept"}}).ok());
  }
  Produce(Window(0));
  std::ostringstream progress;
  options_.progress = &progress;
  auto stats = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->spool_delivered, 1) << progress.str();
  EXPECT_EQ(stats->kept_for_retry, 0);
  auto spool = kafka::DeliverySpool::Open(options_.spool_dir);
  ASSERT_TRUE(spool.ok());
  auto left = spool->Records();
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(kafka::testing::Watermarks(cluster_->bootstrap_servers(),
                                       "spooled-output", 0),
            std::make_pair(int64_t{0}, int64_t{1}));
  // A second run finds nothing left to deliver.
  auto again = RunRewardEngine(*store_, options_, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spool_delivered, 0);
}

}  // namespace
}  // namespace phaseloop::reward_engine
