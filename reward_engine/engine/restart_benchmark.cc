// How long a restarted `phaseloop rewards run` takes to get its partitions
// back: an engine is stopped (SIGKILL or SIGTERM) once it has stored a
// window's reward, a new one is started at once in the same group, and an SLI
// window published right after the restart is timed until its reward is in
// the replay buffer (process start, budget seeding, the group's rebalance,
// the fetch and the 200 ms idle close of a 1 s window).
//
// bazel run -c opt //reward_engine/engine:restart_benchmark --
//     RUNS [engine flags, e.g. --session-timeout-ms 45000]
// Prints each run and, per signal, the median and max.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/engine_test_util.h"

namespace phaseloop::reward_engine {
namespace {

using Clock = std::chrono::steady_clock;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Publishes one 1 s SLI window that ended 2 s ago; returns its start.
int64_t PublishWindow(kafka::Producer& producer) {
  const int64_t start = (WallMs() / 1000 - 3) * 1000;
  reward_engine::testing::ProduceWindows(
      producer, std::string(kafka::kSliTopic),
      {reward_engine::testing::MakeSliWindow("checkout", "baseline", "i1",
                                             start, 1000, {0.01, 0.02})});
  return start;
}

// Waits until the buffer holds a reward of the window starting at `start`;
// false after `limit`.
bool WaitForReward(const std::string& buffer, int64_t start,
                   std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    auto store = replay_buffer::OpenReplayStore(buffer);
    if (store.ok()) {
      replay_buffer::RewardFilter filter;
      filter.window_start_from_ms = start;
      filter.window_start_to_ms = start + 1;
      auto rewards = (*store)->ReadFinalRewards(filter);
      if (rewards.ok() && !rewards->empty()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::atoi(argv[1]) <= 0) {
    std::fprintf(stderr, "usage: restart_benchmark RUNS [engine flags]\n");
    return 2;
  }
  const int runs = std::atoi(argv[1]);
  const std::vector<std::string> extra(argv + 2, argv + argc);
  auto cluster = kafka::EmbeddedCluster::Start(1);
  if (!cluster.ok()) return 1;
  for (absl::string_view topic : kafka::kAllTopics) {
    (void)(*cluster)->CreateTopic(topic, 4, 1);
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  if (!producer.ok()) return 1;
  const std::string dir = phaseloop::testing::MakeTempDir();
  reward_engine::testing::WriteSloDirectory(dir, {{"checkout", 100}});

  for (int signal : {SIGKILL, SIGTERM}) {
    const char* name = signal == SIGKILL ? "SIGKILL" : "SIGTERM";
    std::vector<double> restarts;
    for (int run = 0; run < runs; ++run) {
      const std::string group = std::string(name) + "-" + std::to_string(run);
      const std::string buffer = dir + "/" + group + ".db";
      std::vector<std::string> args = {
          "--kafka",       bootstrap, "--buffer",        buffer,
          "--slo-dir",     dir,       "--window-ms",     "1000",
          "--lateness-ms", "0",       "--close-idle-ms", "200",
          "--group",       group};
      args.insert(args.end(), extra.begin(), extra.end());
      reward_engine::testing::EngineProcess first(args);
      if (!WaitForReward(buffer, PublishWindow(**producer),
                         std::chrono::seconds(300))) {
        std::fprintf(stderr, "the first engine stored nothing\n");
        return 1;
      }
      const auto stop = Clock::now();
      first.Stop(signal);
      const double stop_s = Seconds(Clock::now() - stop);
      const auto restart = Clock::now();
      reward_engine::testing::EngineProcess second(args);
      const int64_t start = PublishWindow(**producer);
      if (!WaitForReward(buffer, start, std::chrono::seconds(300))) {
        std::fprintf(stderr, "the restarted engine stored nothing\n");
        return 1;
      }
      restarts.push_back(Seconds(Clock::now() - restart));
      std::printf("%s run %d: stopped in %.2f s; restart -> reward %.2f s\n",
                  name, run, stop_s, restarts.back());
      std::fflush(stdout);
      second.Stop(SIGTERM);
    }
    std::sort(restarts.begin(), restarts.end());
    std::printf("%s: restart -> reward median %.2f s, max %.2f s (%d runs)\n",
                name, restarts[restarts.size() / 2], restarts.back(), runs);
  }
  return 0;
}

}  // namespace
}  // namespace phaseloop::reward_engine

int main(int argc, char** argv) {
  return phaseloop::reward_engine::Main(argc, argv);
}
