// Reward engine throughput and latency against the embedded cluster:
//  - baseline: raw consume rate of the same records (a consumer-group
//    member that only reads them), measured in the same run;
//  - engine: sustained ingest of SLI windows/s, each with a full sketch
//    (1000 lognormal latencies, ~500 occupied buckets), from the first
//    record read to the last (group join and idle exit excluded);
//  - reward emission latency: from the watermark passing a window's end to
//    its rewards acknowledged by Kafka and committed to the buffer, p50/p99;
//    in the ingest run (the backlog is read partition by partition, so most
//    windows close together at the end) and in a live run where SLI windows
//    are produced as services would, paced in processing time (one 250 ms
//    SLI window of 10 services x 2 groups x 4 instances every 25 ms, engine
//    windows of 1 s: a close every 100 ms), so the p99 is over many closes.
//
// bazel run -c opt //reward_engine/engine:rewards_benchmark -- [records]
//     [live engine windows per service, default 150]
// (default 50000; the 2.0.2 mock broker keeps only ~5 MB per partition, so
// runs beyond ~100k windows lose input before it is read).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "common/metrics/metrics_registry.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/engine_test_util.h"
#include "reward_engine/engine/reward_engine.h"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::reward_engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kServices = 40;
constexpr int kInstances = 12;  // per (service, group)
constexpr int64_t kSliMs = 1000;
constexpr int64_t kWindowMs = 10000;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// The counter's value in the registry's text (0 if absent).
double CounterValue(const metrics::MetricsRegistry& registry,
                    const std::string& name) {
  const std::string text = registry.RenderPrometheusText();
  const std::string prefix = "\n" + name + " ";
  size_t at = text.find(prefix);
  if (at == std::string::npos) return 0;
  return std::atof(text.c_str() + at + prefix.size());
}

int Main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int64_t records = argc > 1 ? std::atoll(argv[1]) : 50000;
  auto cluster = kafka::EmbeddedCluster::Start(1);
  if (!cluster.ok()) {
    std::fprintf(stderr, "cluster: %s\n",
                 std::string(cluster.status().message()).c_str());
    return 1;
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  // The 2.0.2 mock keeps about 5 MB per partition (older records are
  // deleted): 32 SLI partitions hold ~200k windows of ~730 bytes.
  for (absl::string_view topic : kafka::kAllTopics) {
    (void)(*cluster)->CreateTopic(topic, topic == kafka::kSliTopic ? 32 : 4, 1);
  }
  const std::string dir =
      "/tmp/phaseloop_rewards_benchmark_" + std::to_string(getpid());
  if (std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()) != 0) {
    return 1;
  }
  std::map<std::string, double> slos;
  for (int s = 0; s < kServices; ++s) slos[absl::StrCat("svc", s)] = 100;
  testing::WriteSloDirectory(dir, slos);

  // A pool of full sketches, reused across records.
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> draw(std::log(0.03), 1.0);
  std::vector<sli::LatencySketch> pool(32);
  size_t buckets = 0;
  for (sli::LatencySketch& sketch : pool) {
    for (int i = 0; i < 1000; ++i) (void)sketch.Add(draw(rng));
    const v1::LatencySketch proto = sketch.ToProto();
    buckets +=
        static_cast<size_t>(proto.counts_size() + proto.sparse_counts_size());
  }
  std::printf(
      "input: %lld SLI windows, %d services x 2 groups x %d "
      "instances per %lld ms SLI window, engine window %lld ms; "
      "sketches of 1000 latencies, %zu buckets on average\n",
      static_cast<long long>(records), kServices, kInstances,
      static_cast<long long>(kSliMs), static_cast<long long>(kWindowMs),
      buckets / pool.size());

  {
    kafka::ProducerOptions options;
    options.bootstrap_servers = bootstrap;
    options.config = {{"linger.ms", "20"}};
    auto producer = kafka::Producer::Create(options);
    if (!producer.ok()) return 1;
    const auto start = Clock::now();
    int64_t n = 0;
    size_t bytes = 0;
    for (int64_t t = 0; n < records; t += kSliMs) {
      for (int s = 0; s < kServices && n < records; ++s) {
        for (const char* group : {"baseline", "canary"}) {
          for (int i = 0; i < kInstances && n < records; ++i, ++n) {
            v1::SliWindow w;
            w.set_service(absl::StrCat("svc", s));
            w.set_group(group);
            w.set_instance(absl::StrCat("i", i));
            w.set_deployment_id(absl::StrCat("dep-", group));
            w.set_policy_version("pol");
            w.set_window_start_ms(t);
            w.set_window_length_ms(kSliMs);
            sli::SetWindowSketch(pool[static_cast<size_t>(n) % pool.size()],
                                 &w);
            const std::string value = w.SerializeAsString();
            bytes += value.size();
            if (!(*producer)
                     ->Produce(kafka::kSliTopic, kafka::SliKey(w.service()),
                               value)
                     .ok()) {
              return 1;
            }
          }
        }
      }
    }
    if (!(*producer)->Flush(std::chrono::seconds(120)).ok()) return 1;
    std::printf("produced in %.2f s, %.0f bytes per SLI window\n",
                Seconds(Clock::now() - start),
                static_cast<double>(bytes) / static_cast<double>(records));
  }

  // Baseline: raw consumption.
  double raw_rate = 0;
  {
    auto consumer = kafka::Consumer::Create(kafka::testing::GroupOptions(
        bootstrap, "bench-raw", {std::string(kafka::kSliTopic)}));
    if (!consumer.ok()) return 1;
    int64_t n = 0;
    Clock::time_point first;
    Clock::time_point last = Clock::now() + std::chrono::seconds(30);
    while (n < records && Clock::now() < last + std::chrono::seconds(5)) {
      auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
      if (m.ok() && m->has_value()) {
        if (n++ == 0) first = Clock::now();
        last = Clock::now();
      }
    }
    if (n < records) {
      std::fprintf(stderr, "raw consumer read only %lld of %lld records\n",
                   static_cast<long long>(n), static_cast<long long>(records));
      return 1;
    }
    raw_rate = static_cast<double>(n) / Seconds(Clock::now() - first);
    (void)(*consumer)->Close();
  }

  // The engine.
  auto store = replay_buffer::OpenReplayStore(dir + "/buffer.db");
  if (!store.ok()) return 1;
  metrics::MetricsRegistry registry;
  EngineOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = "bench-engine";
  options.windows = {kWindowMs, 0, 1000};
  options.slos = *slo::LoadSloDirectory(dir);
  options.exit_when_idle = std::chrono::milliseconds(3000);
  options.consumer_config = kafka::testing::QuickGroupConfig();
  options.metrics = &registry;
  std::atomic<bool> done{false};
  Clock::time_point first_record, last_record;
  std::thread monitor([&] {
    bool started = false;
    while (!done.load()) {
      const double n =
          CounterValue(registry, "phaseloop_rewards_records_total");
      if (!started && n > 0) {
        first_record = Clock::now();
        started = true;
      }
      if (n >= static_cast<double>(records)) {
        last_record = Clock::now();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto stats = RunRewardEngine(**store, options, nullptr);
  done.store(true);
  monitor.join();
  if (!stats.ok()) {
    std::fprintf(stderr, "engine: %s\n",
                 std::string(stats.status().message()).c_str());
    return 1;
  }
  const double engine_rate =
      static_cast<double>(records) / Seconds(last_record - first_record);
  std::printf("raw consume (baseline): %.0f records/s\n", raw_rate);
  std::printf(
      "engine ingest:          %.0f SLI windows/s (%.2fx the raw "
      "consume rate)\n",
      engine_rate, engine_rate / raw_rate);
  std::printf(
      "windows closed %lld, rewards %lld, late %lld, duplicates "
      "%lld, dead letters %lld, transactions %lld\n",
      static_cast<long long>(stats->windows_closed),
      static_cast<long long>(stats->rewards),
      static_cast<long long>(stats->late),
      static_cast<long long>(stats->duplicates),
      static_cast<long long>(stats->dead_letters),
      static_cast<long long>(stats->transactions));
  std::printf(
      "reward emission after the watermark passes the window end: "
      "p50 %.1f ms, p99 %.1f ms, max %.1f ms (%zu windows)\n",
      Percentile(stats->emission_latency_ms, 0.5),
      Percentile(stats->emission_latency_ms, 0.99),
      Percentile(stats->emission_latency_ms, 1.0),
      stats->emission_latency_ms.size());

  // Live: paced production, windows closing one at a time.
  const int64_t live_windows = argc > 2 ? std::atoll(argv[2]) : 150;
  constexpr int kLiveServices = 10;
  constexpr int kLiveInstances = 4;
  constexpr int64_t kLiveSliMs = 250;
  constexpr int64_t kLiveWindowMs = 1000;
  constexpr auto kTick = std::chrono::milliseconds(25);
  const std::string live_topic = "phaseloop.sli.live";
  (void)(*cluster)->CreateTopic(live_topic, 8, 1);
  auto live_store = replay_buffer::OpenReplayStore(dir + "/live.db");
  if (!live_store.ok()) return 1;
  metrics::MetricsRegistry live_registry;
  EngineOptions live = options;
  live.group_id = "bench-live";
  live.sli_topic = live_topic;
  live.rewards_topic = "phaseloop.rewards.live";
  live.budget_topic = "phaseloop.budget.live";
  live.windows = {kLiveWindowMs, 0, 1000};
  live.metrics = &live_registry;
  absl::StatusOr<EngineStats> live_stats;
  std::thread engine(
      [&] { live_stats = RunRewardEngine(**live_store, live, nullptr); });
  {
    kafka::ProducerOptions producer_options;
    producer_options.bootstrap_servers = bootstrap;
    producer_options.config = {{"linger.ms", "1"},
                               {"socket.nagle.disable", "true"}};
    auto producer = kafka::Producer::Create(producer_options);
    if (!producer.ok()) return 1;
    int64_t n = 0;
    auto tick = [&](int64_t t) {
      for (int s = 0; s < kLiveServices; ++s) {
        for (const char* group : {"baseline", "canary"}) {
          for (int i = 0; i < kLiveInstances; ++i, ++n) {
            v1::SliWindow w;
            w.set_service(absl::StrCat("svc", s));
            w.set_group(group);
            w.set_instance(absl::StrCat("i", i));
            w.set_deployment_id(absl::StrCat("dep-", group));
            w.set_policy_version("pol");
            w.set_window_start_ms(t * kLiveSliMs);
            w.set_window_length_ms(kLiveSliMs);
            sli::SetWindowSketch(pool[static_cast<size_t>(n) % pool.size()],
                                 &w);
            (void)(*producer)->Produce(live_topic, kafka::SliKey(w.service()),
                                       w.SerializeAsString());
          }
        }
      }
    };
    // The first tick, then wait for the engine to join and read it.
    tick(0);
    (void)(*producer)->Flush(std::chrono::seconds(10));
    while (CounterValue(live_registry, "phaseloop_rewards_records_total") <
           static_cast<double>(n)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const int64_t ticks = live_windows * (kLiveWindowMs / kLiveSliMs);
    Clock::time_point next = Clock::now();
    for (int64_t t = 1; t <= ticks; ++t) {
      next += kTick;
      std::this_thread::sleep_until(next);
      tick(t);
    }
  }
  engine.join();
  if (!live_stats.ok()) {
    std::fprintf(stderr, "live engine: %s\n",
                 std::string(live_stats.status().message()).c_str());
    return 1;
  }
  std::printf(
      "live: windows closed %lld in %lld transactions; reward "
      "emission after the watermark passes the window end: p50 %.1f "
      "ms, p99 %.1f ms, max %.1f ms (%zu windows)\n",
      static_cast<long long>(live_stats->windows_closed),
      static_cast<long long>(live_stats->transactions),
      Percentile(live_stats->emission_latency_ms, 0.5),
      Percentile(live_stats->emission_latency_ms, 0.99),
      Percentile(live_stats->emission_latency_ms, 1.0),
      live_stats->emission_latency_ms.size());
  (void)!std::system(("rm -rf " + dir).c_str());
  return 0;
}

}  // namespace
}  // namespace phaseloop::reward_engine

int main(int argc, char** argv) {
  return phaseloop::reward_engine::Main(argc, argv);
}
