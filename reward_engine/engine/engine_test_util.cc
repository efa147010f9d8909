#include "reward_engine/engine/engine_test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "gtest/gtest.h"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::reward_engine::testing {

v1::SliWindow MakeSliWindow(const std::string& service,
                            const std::string& group,
                            const std::string& instance, int64_t start_ms,
                            int64_t length_ms,
                            const std::vector<double>& latencies,
                            int64_t errors) {
  sli::LatencySketch sketch;
  for (double v : latencies) EXPECT_TRUE(sketch.Add(v).ok()) << v;
  v1::SliWindow window;
  window.set_service(service);
  window.set_group(group);
  window.set_instance(instance);
  window.set_deployment_id("dep-" + group);
  window.set_policy_version("pol-" + group);
  window.set_window_start_ms(start_ms);
  window.set_window_length_ms(length_ms);
  sli::SetWindowSketch(sketch, &window);
  window.set_error_count(errors);
  EXPECT_TRUE(sli::ValidateSliWindow(window).ok())
      << sli::ValidateSliWindow(window);
  return window;
}

void WriteSloDirectory(const std::string& dir,
                       const std::map<std::string, double>& thresholds_ms) {
  std::ofstream out(dir + "/slo.yaml");
  bool first = true;
  for (const auto& [service, threshold] : thresholds_ms) {
    if (!first) out << "---\n";
    first = false;
    out << "apiVersion: openslo/v1\nkind: SLO\nmetadata:\n  name: " << service
        << "-latency\nspec:\n  service: " << service
        << "\n  indicator:\n    metadata:\n      name: " << service
        << "-p95\n    spec:\n      thresholdMetric:\n        metricSource:\n"
           "          type: phaseloop\n  timeWindow:\n    - duration: 30d\n"
           "      isRolling: true\n  budgetingMethod: Occurrences\n"
           "  objectives:\n    - op: lte\n      value: "
        << threshold << "\n      target: 0.99\n";
  }
}

void ProduceWindows(kafka::Producer& producer, const std::string& topic,
                    const std::vector<v1::SliWindow>& windows) {
  for (const v1::SliWindow& w : windows) {
    ASSERT_TRUE(
        producer
            .Produce(topic, kafka::SliKey(w.service()), w.SerializeAsString())
            .ok());
  }
  absl::Status flushed = producer.Flush(std::chrono::seconds(60));
  ASSERT_TRUE(flushed.ok()) << flushed;
}

std::vector<kafka::ConsumedMessage> ReadAll(const std::string& bootstrap,
                                            const std::string& topic,
                                            std::chrono::milliseconds quiet) {
  static std::atomic<int> readers{0};
  kafka::ConsumerOptions options = kafka::testing::GroupOptions(
      bootstrap, absl::StrCat("test-reader-", getpid(), "-", readers++),
      {topic});
  auto consumer = kafka::Consumer::Create(options);
  EXPECT_TRUE(consumer.ok()) << consumer.status();
  std::vector<kafka::ConsumedMessage> out;
  if (!consumer.ok()) return out;
  auto last = std::chrono::steady_clock::now();
  const auto deadline = last + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto message = (*consumer)->Poll(std::chrono::milliseconds(100));
    if (!message.ok()) {
      EXPECT_EQ(kafka::ClassOf(message.status()), kafka::ErrorClass::kRetriable)
          << message.status();
      continue;
    }
    if ((*consumer)->Assignment().empty()) {
      last = std::chrono::steady_clock::now();
    }
    if (message->has_value()) {
      out.push_back(std::move(**message));
      last = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last >= quiet) {
      break;
    }
  }
  (void)(*consumer)->Close();
  return out;
}

std::map<std::string, std::string> LatestPerKey(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds quiet) {
  std::map<std::string, std::string> latest;
  for (kafka::ConsumedMessage& m : ReadAll(bootstrap, topic, quiet)) {
    latest[m.key] = std::move(m.value);
  }
  return latest;
}

std::map<std::string, std::string> BufferRewards(
    replay_buffer::ReplayStore& store) {
  std::map<std::string, std::string> rewards;
  absl::Status scanned =
      store.Scan(1000, [&](const replay_buffer::WriteBatch& batch) {
        for (const v1::FinalReward& r : batch.rewards) {
          rewards[r.reward_id()] = r.SerializeAsString();
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(scanned.ok()) << scanned;
  return rewards;
}

EngineProcess::EngineProcess(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"tools/phaseloop", "rewards", "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> pointers;
    for (std::string& a : argv) pointers.push_back(a.data());
    pointers.push_back(nullptr);
    execv(pointers[0], pointers.data());
    _exit(127);
  }
}

EngineProcess::~EngineProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

void EngineProcess::Stop(int signal) {
  if (pid_ <= 0) return;
  kill(pid_, signal);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int EngineProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

}  // namespace phaseloop::reward_engine::testing
