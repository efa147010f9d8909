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

int RunCommand(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& arg : argv)
      args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  output->clear();
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) {
    output->append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string MakeTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern =
      std::string(base != nullptr ? base : "/tmp") + "/kafka_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

}  // namespace phaseloop::kafka::testing
