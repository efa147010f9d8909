// `phaseloop kafka serve` as a user runs it: a subprocess whose bootstrap
// file kcat and our own clients use, stopped by SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/kafka_command.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kPhaseloop[] = "tools/phaseloop";
constexpr char kKcat[] = "/usr/bin/kcat";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// A running `phaseloop kafka serve` with its stdout in a file.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& args) {
    dir_ = testing::MakeTempDir();
    stdout_path_ = dir_ + "/stdout";
    pid_ = fork();
    if (pid_ == 0) {
      const int out =
          open(stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      std::vector<std::string> argv = {kPhaseloop, "kafka", "serve"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c_argv;
      for (std::string& arg : argv) c_argv.push_back(arg.data());
      c_argv.push_back(nullptr);
      execv(kPhaseloop, c_argv.data());
      _exit(127);
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  const std::string& dir() const { return dir_; }
  std::string Stdout() const { return ReadFile(stdout_path_); }

  // Sends `signal` and returns the exit status (-1 if it did not exit in
  // 15 s or died of a signal).
  int Stop(int signal) {
    kill(pid_, signal);
    for (int i = 0; i < 150; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  std::string dir_;
  std::string stdout_path_;
};

bool WaitForFile(const std::string& path, seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  struct stat info;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stat(path.c_str(), &info) == 0 && info.st_size > 0) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

TEST(KafkaServeTest, ServesUntilSigtermForKcatAndOurClients) {
  const std::string dir = testing::MakeTempDir();
  const std::string file = dir + "/bootstrap";
  ServeProcess serve({"--brokers", "2", "--bootstrap-file", file});
  ASSERT_TRUE(WaitForFile(file, seconds(15))) << "no bootstrap file";
  std::string bootstrap = ReadFile(file);
  ASSERT_TRUE(absl::EndsWith(bootstrap, "\n"));
  bootstrap.pop_back();
  EXPECT_TRUE(absl::StartsWith(bootstrap, "127.0.0.1:")) << bootstrap;
  EXPECT_EQ(std::count(bootstrap.begin(), bootstrap.end(), ','), 1);
  EXPECT_EQ(serve.Stdout(), bootstrap + "\n");

  if (access(kKcat, X_OK) == 0) {
    std::string listing;
    ASSERT_EQ(testing::RunCommand({kKcat, "-b", bootstrap, "-L"}, &listing), 0)
        << listing;
    EXPECT_TRUE(absl::StrContains(listing, "2 brokers:")) << listing;
    for (absl::string_view topic : kAllTopics) {
      EXPECT_TRUE(absl::StrContains(
          listing, absl::StrCat("topic \"", topic, "\" with 4 partitions")))
          << topic << " missing from:\n"
          << listing;
    }
  } else {
    ADD_FAILURE() << kKcat << " is missing: run tools/setup.sh";
  }

  ProducerOptions producer_options;
  producer_options.bootstrap_servers = bootstrap;
  auto producer = Producer::Create(producer_options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*producer)
                    ->Produce(kDecisionsTopic, absl::StrCat("decision-", i),
                              absl::StrCat("record-", i))
                    .ok());
  }
  ASSERT_TRUE((*producer)->Flush(seconds(10)).ok());
  auto consumer = Consumer::Create(testing::GroupOptions(
      bootstrap, "serve-test", {std::string(kDecisionsTopic)}));
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  auto received = testing::ConsumeFrom({consumer->get()}, 20, seconds(20));
  EXPECT_EQ(received[0].size(), 20u);
  ASSERT_TRUE((*consumer)->Close().ok());

  EXPECT_EQ(serve.Stop(SIGTERM), 0);
  EXPECT_NE(access(file.c_str(), F_OK), 0) << "bootstrap file left behind";
}

TEST(KafkaServeTest, SigintStopsItToo) {
  ServeProcess serve({});
  const auto deadline = std::chrono::steady_clock::now() + seconds(15);
  while (serve.Stdout().empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(absl::StartsWith(serve.Stdout(), "127.0.0.1:"));
  EXPECT_EQ(serve.Stop(SIGINT), 0);
}

TEST(KafkaServeTest, BadInputExitsTwo) {
  std::string output;
  EXPECT_EQ(testing::RunCommand(
                {kPhaseloop, "kafka", "serve", "--brokers", "0"}, &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--brokers 0")) << output;
  EXPECT_EQ(testing::RunCommand({kPhaseloop, "kafka", "serve",
                                 "--bootstrap-file", "/nonexistent/dir/file"},
                                &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "/nonexistent/dir/file")) << output;
  EXPECT_EQ(testing::RunCommand(
                {kPhaseloop, "kafka", "serve", "--no-such-flag"}, &output),
            2);
  EXPECT_EQ(
      testing::RunCommand({kPhaseloop, "kafka", "serve", "--help"}, &output),
      0);
  EXPECT_TRUE(absl::StrContains(output, "--bootstrap-file")) << output;
}

}  // namespace
}  // namespace phaseloop::kafka
