// Effectively-once rewards through broker faults and crashes: the same SLI
// input goes to a fault-free cluster and to a faulty one (or to a real
// `phaseloop rewards run` that is SIGKILLed mid-stream and restarted); the
// FinalRewards in the buffer and the latest Reward per key on the rewards
// topic must be identical — nothing lost, nothing counted twice.
//
// Why the results can be compared exactly: the input is in event order per
// key, so no record is late whatever the timing (a partition holds the
// watermark until it has read everything it holds), and a Reward is a pure
// function of its window's records.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "reward_engine/engine/engine_test_util.h"
#include "reward_engine/engine/reward_engine.h"

namespace phaseloop::reward_engine {
namespace {

constexpr int64_t kWindowMs = 10000;
constexpr int64_t kSliMs = 5000;
constexpr char kGroup[] = "fault-test-engine";

// Windows [first, last) of SLI input: 2 services x 2 groups x 3 instances x
// 2 SLI windows per window, each a sketch of 40 latencies.
std::vector<v1::SliWindow> Input(int64_t first, int64_t last) {
  std::vector<v1::SliWindow> out;
  for (int64_t w = first; w < last; ++w) {
    // Seeded per window: Input(0, 4) + Input(4, 12) == Input(0, 12).
    std::mt19937_64 rng(static_cast<uint64_t>(w));
    for (int64_t half : {int64_t{0}, kSliMs}) {
      for (const char* service : {"checkout", "search"}) {
        for (const char* group : {"baseline", "canary"}) {
          for (const char* instance : {"i1", "i2", "i3"}) {
            std::vector<double> latencies;
            std::lognormal_distribution<double> draw(
                std::log(std::string(group) == "canary" ? 0.04 : 0.05), 0.5);
            for (int i = 0; i < 40; ++i) latencies.push_back(draw(rng));
            out.push_back(testing::MakeSliWindow(
                service, group, instance, w * kWindowMs + half, kSliMs,
                latencies, static_cast<int64_t>(rng() % 3)));
          }
        }
      }
    }
  }
  return out;
}

constexpr int64_t kWindows = 12;

std::unique_ptr<kafka::EmbeddedCluster> StartCluster(int brokers) {
  auto cluster = kafka::EmbeddedCluster::Start(brokers);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  for (absl::string_view topic : kafka::kAllTopics) {
    EXPECT_TRUE((*cluster)->CreateTopic(topic, 4, std::min(brokers, 3)).ok());
  }
  return *std::move(cluster);
}

std::unique_ptr<kafka::Producer> MakeProducer(const std::string& bootstrap) {
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(options);
  EXPECT_TRUE(producer.ok());
  return *std::move(producer);
}

struct Outcome {
  std::map<std::string, std::string> buffer;  // reward_id -> FinalReward
  std::map<std::string, std::string> topic;   // key -> latest Reward
};

Outcome Collect(replay_buffer::ReplayStore& store,
                const std::string& bootstrap) {
  Outcome outcome;
  outcome.buffer = testing::BufferRewards(store);
  outcome.topic = testing::LatestPerKey(
      bootstrap, std::string(kafka::kRewardsTopic), std::chrono::seconds(3));
  return outcome;
}

EngineOptions Options(const std::string& bootstrap, const std::string& dir) {
  EngineOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = kGroup;
  options.windows = {kWindowMs, 0, 500};
  auto slos = slo::LoadSloDirectory(dir);
  EXPECT_TRUE(slos.ok()) << slos.status();
  options.slos = *slos;
  options.exit_when_idle = std::chrono::milliseconds(4000);
  options.consumer_config = kafka::testing::QuickGroupConfig();
  return options;
}

// The fault-free run of Input(0, kWindows).
Outcome Reference(const std::string& dir) {
  auto cluster = StartCluster(1);
  {
    auto producer = MakeProducer(cluster->bootstrap_servers());
    testing::ProduceWindows(*producer, std::string(kafka::kSliTopic),
                            Input(0, kWindows));
  }
  auto store = replay_buffer::OpenReplayStore(dir + "/reference.db");
  EXPECT_TRUE(store.ok());
  auto stats = RunRewardEngine(
      **store, Options(cluster->bootstrap_servers(), dir), nullptr);
  EXPECT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->late, 0);
  EXPECT_EQ(stats->dead_letters, 0);
  return Collect(**store, cluster->bootstrap_servers());
}

std::string SloDir() {
  std::string dir = kafka::testing::MakeTempDir();
  testing::WriteSloDirectory(dir, {{"checkout", 60}, {"search", 80}});
  return dir;
}

void ExpectSame(const Outcome& got, const Outcome& expected) {
  // Every window closes: 0..kWindows-2 by the watermark, the last at the
  // drained exit (--exit-when-idle-ms). 2 services x 2 groups each.
  const size_t rewards = 4 * kWindows;
  EXPECT_EQ(expected.buffer.size(), rewards);
  EXPECT_EQ(expected.topic.size(), rewards);
  EXPECT_EQ(got.buffer.size(), expected.buffer.size());
  EXPECT_EQ(got.topic.size(), expected.topic.size());
  for (const auto& [id, value] : expected.buffer) {
    auto it = got.buffer.find(id);
    ASSERT_NE(it, got.buffer.end()) << "missing in the buffer: " << id;
    EXPECT_EQ(it->second, value) << "differs in the buffer: " << id;
  }
  for (const auto& [key, value] : expected.topic) {
    auto it = got.topic.find(key);
    ASSERT_NE(it, got.topic.end()) << "missing on the topic: " << key;
    v1::Reward a, b;
    ASSERT_TRUE(a.ParseFromString(value));
    ASSERT_TRUE(b.ParseFromString(it->second));
    EXPECT_EQ(it->second, value) << "differs on the topic: " << key << "\n"
                                 << b.DebugString() << "\nexpected\n"
                                 << a.DebugString();
  }
}

TEST(RewardEngineFaultTest, BrokerFaultsGiveTheFaultFreeRewards) {
  const std::string dir = SloDir();
  const Outcome expected = Reference(dir);

  auto cluster = StartCluster(3);
  const std::string bootstrap = cluster->bootstrap_servers();
  {
    auto producer = MakeProducer(bootstrap);
    testing::ProduceWindows(*producer, std::string(kafka::kSliTopic),
                            Input(0, kWindows));
  }
  auto store = replay_buffer::OpenReplayStore(dir + "/faulty.db");
  ASSERT_TRUE(store.ok());
  // Slow everything down so the faults land while the engine works, and
  // queue request errors for its first produces, fetches and group joins.
  ASSERT_TRUE(cluster->SetRtt(kafka::kAllBrokers, 40).ok());
  ASSERT_TRUE(
      cluster
          ->PushRequestErrors(kafka::ApiKey::kProduce,
                              {RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                               RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
                               RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                               RD_KAFKA_RESP_ERR__TRANSPORT})
          .ok());
  ASSERT_TRUE(
      cluster
          ->PushRequestErrors(kafka::ApiKey::kFetch,
                              {RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                               RD_KAFKA_RESP_ERR__TRANSPORT,
                               RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART})
          .ok());
  ASSERT_TRUE(
      cluster
          ->PushRequestErrors(kafka::ApiKey::kFindCoordinator,
                              {RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE})
          .ok());

  std::atomic<bool> done{false};
  std::thread faults([&] {
    std::mt19937 rng(1);
    auto sleep_ms = [](int ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
    sleep_ms(3500);  // the group join
    for (int round = 0; round < 6 && !done.load(); ++round) {
      const int32_t broker = 2 + static_cast<int32_t>(rng() % 2);
      switch (round % 3) {
        case 0:  // a broker goes down and comes back
          (void)cluster->SetBrokerDown(broker);
          sleep_ms(800);
          (void)cluster->SetBrokerUp(broker);
          break;
        case 1:  // leaders move (input and output topics)
          for (int32_t p = 0; p < 4; ++p) {
            (void)cluster->SetPartitionLeader(
                kafka::kSliTopic, p, 1 + static_cast<int32_t>(rng() % 3));
            (void)cluster->SetPartitionLeader(
                kafka::kRewardsTopic, p, 1 + static_cast<int32_t>(rng() % 3));
          }
          break;
        case 2:  // errors and a slow broker
          (void)cluster->PushRequestErrors(
              kafka::ApiKey::kProduce,
              {RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
               RD_KAFKA_RESP_ERR__TRANSPORT});
          (void)cluster->SetRtt(broker, 300);
          sleep_ms(600);
          (void)cluster->SetRtt(broker, 40);
          break;
      }
      sleep_ms(300);
    }
    (void)cluster->SetRtt(kafka::kAllBrokers, 0);
  });
  EngineOptions options = Options(bootstrap, dir);
  auto stats = RunRewardEngine(**store, options, nullptr);
  done.store(true);
  faults.join();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->late, 0);
  ExpectSame(Collect(**store, bootstrap), expected);
}

// --- SIGKILL of the real binary ---

// The engine as a user runs it, killed and restarted.
testing::EngineProcess StartEngine(const std::string& bootstrap,
                                   const std::string& buffer,
                                   const std::string& slo_dir,
                                   int64_t exit_when_idle_ms) {
  return testing::EngineProcess(
      {"--kafka", bootstrap, "--buffer", buffer, "--slo-dir", slo_dir,
       "--window-ms", std::to_string(kWindowMs), "--lateness-ms", "0",
       "--idle-ms", "500", "--group", kGroup, "--quick-group",
       "--exit-when-idle-ms", std::to_string(exit_when_idle_ms), "--json"});
}

TEST(RewardEngineFaultTest, SigkillMidStreamAndRestartGiveTheFaultFreeRewards) {
  const std::string dir = SloDir();
  const Outcome expected = Reference(dir);

  auto cluster = StartCluster(1);
  const std::string bootstrap = cluster->bootstrap_servers();
  // Slow responses so a kill lands between producing and storing.
  ASSERT_TRUE(cluster->SetRtt(kafka::kAllBrokers, 30).ok());
  auto producer = MakeProducer(bootstrap);
  const std::string buffer = dir + "/killed.db";
  auto rewards_stored = [&] {
    auto store = replay_buffer::OpenReplayStore(buffer);
    return store.ok() ? testing::BufferRewards(**store).size() : size_t{0};
  };
  std::mt19937 rng(3);
  // Input in chunks of whole windows; the engine is killed after each chunk
  // once it has stored something more, at a random moment.
  const int64_t chunks[][2] = {{0, 4}, {4, 7}, {7, 10}};
  int kills = 0;
  for (const auto& chunk : chunks) {
    testing::EngineProcess engine = StartEngine(bootstrap, buffer, dir, 0);
    const size_t before = rewards_stored();
    testing::ProduceWindows(*producer, std::string(kafka::kSliTopic),
                            Input(chunk[0], chunk[1]));
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (rewards_stored() == before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
    engine.Stop(SIGKILL);
    ++kills;
  }
  EXPECT_EQ(kills, 3);
  EXPECT_LT(rewards_stored(), expected.buffer.size());
  {
    testing::EngineProcess engine = StartEngine(bootstrap, buffer, dir, 4000);
    testing::ProduceWindows(*producer, std::string(kafka::kSliTopic),
                            Input(10, kWindows));
    ASSERT_EQ(engine.Wait(std::chrono::seconds(40)), 0);
  }
  auto store = replay_buffer::OpenReplayStore(buffer);
  ASSERT_TRUE(store.ok());
  ExpectSame(Collect(**store, bootstrap), expected);
}

}  // namespace
}  // namespace phaseloop::reward_engine
