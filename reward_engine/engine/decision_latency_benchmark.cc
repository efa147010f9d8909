// How long a canary waits for a window's verdict: from the end of an engine
// window (wall clock) to the moment both its Rewards (baseline and canary)
// are on phaseloop.rewards, read by a plain consumer as a controller would.
// The real `phaseloop rewards run` runs against the embedded cluster with its
// default flags plus those given; SLI windows of two groups x two instances
// are published as the SliRecorder's flusher publishes them: each SLI window
// once the wall clock is its default grace (1 s) past its end.
//
// bazel run -c opt //reward_engine/engine:decision_latency_benchmark --
//     WINDOWS SLI_WINDOW_MS WARMUP_MS [engine flags, e.g. --window-ms 1000]
// Measures the first WINDOWS whole engine windows starting WARMUP_MS or more
// after the engine starts (at start-up, partitions that never had a record
// hold the watermark for --idle-ms). Prints one line per engine window and
// the median and max latency.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/kafka/consumer.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"
#include "common/testing/test_util.h"
#include "phaseloop/v1/reward.pb.h"
#include "reward_engine/engine/engine_test_util.h"

namespace phaseloop::reward_engine {
namespace {

constexpr int64_t kGraceMs = 1000;  // SliRecorderOptions::grace_ms default

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SleepUntilWallMs(int64_t ms) {
  const int64_t now = WallMs();
  if (ms > now)
    std::this_thread::sleep_for(std::chrono::milliseconds(ms - now));
}

int Main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: decision_latency_benchmark WINDOWS SLI_WINDOW_MS "
                 "WARMUP_MS [engine flags]\n");
    return 2;
  }
  const int windows = std::atoi(argv[1]);
  const int64_t sli_ms = std::atoll(argv[2]);
  const int64_t warmup_ms = std::atoll(argv[3]);
  std::vector<std::string> extra(argv + 4, argv + argc);
  int64_t window_ms = 60000;  // RewardsRunFlags default
  for (size_t i = 0; i + 1 < extra.size(); ++i) {
    if (extra[i] == "--window-ms") window_ms = std::atoll(extra[i + 1].c_str());
  }
  if (windows <= 0 || sli_ms <= 0 || window_ms % sli_ms != 0) {
    std::fprintf(stderr, "WINDOWS > 0, SLI_WINDOW_MS dividing --window-ms\n");
    return 2;
  }
  auto cluster = kafka::EmbeddedCluster::Start(1);
  if (!cluster.ok()) return 1;
  for (absl::string_view topic : kafka::kAllTopics) {
    (void)(*cluster)->CreateTopic(topic, 4, 1);
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  const std::string dir = phaseloop::testing::MakeTempDir();
  reward_engine::testing::WriteSloDirectory(dir, {{"checkout", 100}});
  std::vector<std::string> args = {"--kafka",          bootstrap,   "--buffer",
                                   dir + "/buffer.db", "--slo-dir", dir};
  args.insert(args.end(), extra.begin(), extra.end());
  reward_engine::testing::EngineProcess engine(args);

  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = kafka::Producer::Create(producer_options);
  if (!producer.ok()) return 1;

  // Windows measured: the first `windows` whole engine windows after start.
  const int64_t first = ((WallMs() + warmup_ms) / window_ms + 1) * window_ms;
  const int64_t last = first + windows * window_ms;
  std::atomic<bool> done{false};
  std::thread services([&] {
    std::mt19937_64 rng(1);
    std::lognormal_distribution<double> draw(std::log(0.02), 0.4);
    for (int64_t start = (WallMs() / sli_ms + 1) * sli_ms;
         start < last + 10 * window_ms && !done; start += sli_ms) {
      SleepUntilWallMs(start + sli_ms + kGraceMs);
      std::vector<v1::SliWindow> batch;
      for (const char* group : {"baseline", "canary"}) {
        for (const char* instance : {"i1", "i2"}) {
          std::vector<double> latencies(200);
          for (double& l : latencies) l = draw(rng);
          batch.push_back(reward_engine::testing::MakeSliWindow(
              "checkout", group, instance, start, sli_ms, latencies));
        }
      }
      reward_engine::testing::ProduceWindows(
          **producer, std::string(kafka::kSliTopic), batch);
    }
  });

  kafka::ConsumerOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = "decision-latency-reader";
  options.topics = {std::string(kafka::kRewardsTopic)};
  auto reader = kafka::Consumer::Create(options);
  if (!reader.ok()) return 1;
  std::map<int64_t, int> groups_seen;  // window start -> rewards read
  std::vector<double> latencies_s;
  while (static_cast<int>(latencies_s.size()) < windows) {
    auto message = (*reader)->Poll(std::chrono::milliseconds(100));
    if (!message.ok() || !message->has_value()) continue;
    v1::Reward reward;
    if (!reward.ParseFromString((*message)->value)) continue;
    const int64_t start = reward.window_start_ms();
    if (start < first || start >= last || ++groups_seen[start] != 2) continue;
    const double latency = (WallMs() - reward.window_end_ms()) / 1000.0;
    latencies_s.push_back(latency);
    std::printf("window %lld: both rewards %.3f s after its end\n",
                static_cast<long long>(start), latency);
    std::fflush(stdout);
  }
  done = true;
  services.join();
  engine.Stop(SIGTERM);
  std::sort(latencies_s.begin(), latencies_s.end());
  std::printf(
      "windows %zu, engine window %lld ms, SLI window %lld ms: window end -> "
      "rewards median %.3f s, max %.3f s\n",
      latencies_s.size(), static_cast<long long>(window_ms),
      static_cast<long long>(sli_ms), latencies_s[latencies_s.size() / 2],
      latencies_s.back());
  return 0;
}

}  // namespace
}  // namespace phaseloop::reward_engine

int main(int argc, char** argv) {
  return phaseloop::reward_engine::Main(argc, argv);
}
