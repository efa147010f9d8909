// A cleanly stopped engine (SIGTERM) leaves its consumer group, so the engine
// restarted after it gets the partitions back without waiting for the old
// member's session to expire.
//
// Why the bound below tells a leave from no leave, on the embedded cluster
// (librdkafka 2.0.2's mock coordinator) with session timeout S: after the
// last member's LeaveGroup the group rebalances after S - 1 s, and the
// restarted member joins that rebalance; without a leave the dead member
// keeps the group for its whole session (S after its last heartbeat) and
// the rebalance that drops it waits S - 1 s more, about 2S - 1 s in all. S
// is long here (20 s) so the margins either side of 1.5 S are seconds, not
// milliseconds, on a loaded machine. (A real broker is faster still after a
// leave: its group is empty at once and waits group.initial.rebalance.delay.ms,
// 3 s by default.)
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/engine_test_util.h"

namespace phaseloop::reward_engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kSession(20);

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Publishes a 1 s SLI window that ended at least 2 s ago, starting after
// `after`; returns its start.
int64_t PublishWindow(kafka::Producer& producer, int64_t after) {
  const int64_t start = std::max(after + 1000, (WallMs() / 1000 - 3) * 1000);
  testing::ProduceWindows(producer, std::string(kafka::kSliTopic),
                          {testing::MakeSliWindow("checkout", "baseline", "i1",
                                                  start, 1000, {0.01, 0.02})});
  return start;
}

// Whether the buffer holds a reward of the window starting at `start` before
// `deadline`.
bool RewardStoredBefore(const std::string& buffer, int64_t start,
                        Clock::time_point deadline) {
  while (Clock::now() < deadline) {
    auto store = replay_buffer::OpenReplayStore(buffer);
    if (store.ok()) {
      replay_buffer::RewardFilter filter;
      filter.window_start_from_ms = start;
      filter.window_start_to_ms = start + 1;
      auto rewards = (*store)->ReadFinalRewards(filter);
      if (rewards.ok() && !rewards->empty()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(RewardEngineRestartTest, AnEngineRestartedAfterSigtermGetsItsPartitions) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  for (absl::string_view topic : kafka::kAllTopics) {
    ASSERT_TRUE((*cluster)->CreateTopic(topic, 4, 1).ok());
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  const std::string dir = phaseloop::testing::MakeTempDir();
  testing::WriteSloDirectory(dir, {{"checkout", 100}});
  const std::string buffer = dir + "/buffer.db";
  const std::vector<std::string> args = {
      "--kafka",
      bootstrap,
      "--buffer",
      buffer,
      "--slo-dir",
      dir,
      "--window-ms",
      "1000",
      "--lateness-ms",
      "0",
      "--close-idle-ms",
      "200",
      "--group",
      "restart-test",
      "--session-timeout-ms",
      std::to_string(std::chrono::milliseconds(kSession).count())};
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();

  testing::EngineProcess first(args);
  const int64_t before = PublishWindow(**producer, 0);
  // The first engine holds every partition once it has stored a reward.
  ASSERT_TRUE(RewardStoredBefore(buffer, before,
                                 Clock::now() + std::chrono::minutes(2)));
  const Clock::time_point stopped = Clock::now();
  first.Stop(SIGTERM);

  testing::EngineProcess second(args);
  const int64_t after = PublishWindow(**producer, before);
  EXPECT_TRUE(RewardStoredBefore(buffer, after, stopped + kSession * 3 / 2))
      << "the restarted engine did not read a record published after it "
         "started within 1.5 session timeouts of the SIGTERM: did the "
         "stopped engine leave the group?";
  second.Stop(SIGTERM);
}

}  // namespace
}  // namespace phaseloop::reward_engine
