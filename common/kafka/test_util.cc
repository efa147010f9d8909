#include "common/kafka/test_util.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "common/kafka/kafka_error.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka::testing {

std::map<std::string, std::string> QuickGroupConfig() {
  return {
      {"session.timeout.ms", "4000"},
      {"heartbeat.interval.ms", "300"},
      {"fetch.wait.max.ms", "100"},
  };
}

ConsumerOptions GroupOptions(const std::string& bootstrap,
                             const std::string& group,
                             std::vector<std::string> topics) {
  ConsumerOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = group;
  options.topics = std::move(topics);
  options.config = QuickGroupConfig();
  return options;
}

std::vector<std::vector<ConsumedMessage>> ConsumeFrom(
    const std::vector<Consumer*>& consumers, size_t count,
    std::chrono::milliseconds timeout) {
  std::vector<std::vector<ConsumedMessage>> received(consumers.size());
  size_t total = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (total < count && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < consumers.size(); ++i) {
      auto message = consumers[i]->Poll(std::chrono::milliseconds(50));
      if (!message.ok()) {
        EXPECT_EQ(ClassOf(message.status()), ErrorClass::kRetriable)
            << message.status();
        continue;
      }
      if (message->has_value()) {
        received[i].push_back(std::move(**message));
        ++total;
      }
    }
  }
  return received;
}

bool WaitForAssignments(const std::vector<Consumer*>& consumers,
                        size_t partitions, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    size_t held = 0;
    bool all_hold_some = true;
    for (Consumer* consumer : consumers) {
      auto message = consumer->Poll(std::chrono::milliseconds(50));
      EXPECT_TRUE(!message.ok() || !message->has_value())
          << "a record arrived while waiting for the group to settle";
      const size_t assigned = consumer->Assignment().size();
      held += assigned;
      all_hold_some = all_hold_some && assigned > 0;
    }
    if (all_hold_some && held == partitions) return true;
  }
  return false;
}

}  // namespace phaseloop::kafka::testing
