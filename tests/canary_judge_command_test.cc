// `phaseloop canary judge` as a user runs it: the real binary on an
// ephemeral loopback port, real HTTP requests, SIGTERM; and its flag errors.
// (Here rather than in canary/judge: the whole binary reaches the policy
// store, which canary/ may use only through its client.)
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::canary {
namespace {

using phaseloop::testing::ReadFileOrEmpty;
using phaseloop::testing::RunCommand;

constexpr char kPhaseloop[] = "tools/phaseloop";

TEST(JudgeCommandTest, ServesJudgementsUntilSigterm) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string address_file = dir + "/address";
  const pid_t pid = fork();
  if (pid == 0) {
    execl(kPhaseloop, kPhaseloop, "canary", "judge", "--listen", "127.0.0.1:0",
          "--config", "configs/canary/judge.yaml", "--address-file",
          address_file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string address;
  for (int i = 0; i < 300 && address.empty(); ++i) {
    address = std::string(
        absl::StripTrailingAsciiWhitespace(ReadFileOrEmpty(address_file)));
    if (address.empty()) usleep(50000);
  }
  ASSERT_TRUE(absl::StartsWith(address, "127.0.0.1:")) << address;
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(address.substr(10), &port)) << address;

  httplib::Client client("127.0.0.1", port);
  std::vector<double> baseline, canary;
  for (int i = 0; i < 60; ++i) {
    baseline.push_back(100 + i);
    canary.push_back(1.2 * (100 + i));
  }
  const nlohmann::json request = {
      {"metrics",
       {{"latency_ms", {{"baseline", baseline}, {"canary", canary}}}}}};
  auto judged = client.Post("/v1/judge", request.dump(), "application/json");
  ASSERT_TRUE(judged);
  EXPECT_EQ(judged->status, 200);
  const auto json = nlohmann::json::parse(judged->body);
  EXPECT_EQ(json["result"]["outcome"], "Fail") << judged->body;
  auto bad = client.Post("/v1/judge", "{oops", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(absl::StrContains(bad->body, "not valid JSON")) << bad->body;

  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFileOrEmpty(address_file), "");  // removed on a clean stop
}

TEST(JudgeCommandTest, BadFlagsAreBadInputNamingTheFlag) {
  std::string output;
  EXPECT_EQ(
      RunCommand({kPhaseloop, "canary", "judge", "--listen", "9471"}, &output),
      2);
  EXPECT_TRUE(absl::StrContains(output, "--listen 9471: expected HOST:PORT"))
      << output;
  EXPECT_EQ(RunCommand({kPhaseloop, "canary", "judge", "--config",
                        "/nonexistent/judge.yaml"},
                       &output),
            2);
  EXPECT_TRUE(absl::StrContains(output, "/nonexistent/judge.yaml")) << output;
  const std::string bad = phaseloop::testing::MakeTempDir() + "/bad.yaml";
  ASSERT_EQ(RunCommand({"sh", "-c", "echo 'confidence: 2' > " + bad}, &output),
            0);
  EXPECT_EQ(
      RunCommand({kPhaseloop, "canary", "judge", "--config", bad}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, bad + ": confidence: 2 is outside"))
      << output;
}

}  // namespace
}  // namespace phaseloop::canary
