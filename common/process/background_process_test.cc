#include "common/process/background_process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(BackgroundProcessTest, StartsLogsAndStops) {
  const std::string log = testing::MakeTempDir() + "/child.log";
  auto child =
      StartBackground({{"sh", "-c", "echo started $GREETING; exec sleep 600"},
                       {"GREETING=hello"},
                       log});
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_TRUE(IsRunning(*child));
  for (int i = 0; i < 500 && ReadAll(log).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ReadAll(log), "started hello\n");
  ASSERT_TRUE(StopBackground(*child, 2000).ok());
  EXPECT_FALSE(IsRunning(*child));
  // Stopping again is fine.
  EXPECT_TRUE(StopBackground(*child).ok());
}

TEST(BackgroundProcessTest, ExitStatusOnceItEnds) {
  const std::string log = testing::MakeTempDir() + "/child.log";
  auto child =
      StartBackground({{"sh", "-c", "read x < /dev/null; exit 3"}, {}, log});
  ASSERT_TRUE(child.ok()) << child.status();
  std::optional<int> status;
  for (int i = 0; i < 1000 && !status; ++i) {
    status = ExitStatusIfEnded(*child);
    if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(status, 3);
  auto killed = StartBackground({{"sleep", "600"}, {}, log});
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(ExitStatusIfEnded(*killed), std::nullopt);  // running
  kill(killed->pid, SIGKILL);
  status.reset();
  for (int i = 0; i < 1000 && !status; ++i) {
    status = ExitStatusIfEnded(*killed);
    if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(status, 128 + SIGKILL);
}

TEST(BackgroundProcessTest, StdoutToItsOwnFile) {
  const std::string dir = testing::MakeTempDir();
  auto child = StartBackground(
      {{"sh", "-c", "echo out; echo err >&2"}, {}, dir + "/log", dir + "/out"});
  ASSERT_TRUE(child.ok()) << child.status();
  std::optional<int> status;
  for (int i = 0; i < 1000 && !status; ++i) {
    status = ExitStatusIfEnded(*child);
    if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(status, 0);
  EXPECT_EQ(ReadAll(dir + "/out"), "out\n");
  EXPECT_EQ(ReadAll(dir + "/log"), "err\n");
}

TEST(BackgroundProcessTest, AProcessIgnoringTermIsKilled) {
  const std::string log = testing::MakeTempDir() + "/child.log";
  auto child = StartBackground(
      {{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"},
       {},
       log});
  ASSERT_TRUE(child.ok()) << child.status();
  for (int i = 0; i < 500 && ReadAll(log).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(StopBackground(*child, 200).ok());
  EXPECT_FALSE(IsRunning(*child));
}

TEST(BackgroundProcessTest, ARecycledPidIsNotTheProcess) {
  auto me = ProcessStartTicks(getpid());
  ASSERT_TRUE(me.ok()) << me.status();
  BackgroundProcess impostor{getpid(), *me + 1};
  EXPECT_FALSE(IsRunning(impostor));
  // Never signalled: this test process survives.
  EXPECT_TRUE(StopBackground(impostor, 100).ok());
}

TEST(BackgroundProcessTest, AMissingProgramIsAnErrorNamingIt) {
  const std::string log = testing::MakeTempDir() + "/child.log";
  auto child = StartBackground({{"no-such-program-xyz"}, {}, log});
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("no-such-program-xyz"),
            std::string::npos);
  auto no_log = StartBackground({{"true"}, {}, "/nonexistent/dir/log"});
  ASSERT_FALSE(no_log.ok());
  EXPECT_NE(no_log.status().message().find("/nonexistent/dir/log"),
            std::string::npos);
}

TEST(BackgroundProcessTest, AChildIsTerminatedWhenItsStarterDies) {
  // A starter process starts a sleeper, writes its pid and dies by SIGKILL:
  // PR_SET_PDEATHSIG brings the sleeper down with it.
  const std::string dir = testing::MakeTempDir();
  const pid_t starter = fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    auto child = StartBackground({{"sleep", "600"}, {}, dir + "/log"});
    std::ofstream(dir + "/pid") << (child.ok() ? child->pid : 0) << " "
                                << (child.ok() ? child->start_ticks : 0);
    pause();
    _exit(0);
  }
  pid_t pid = 0;
  int64_t ticks = 0;
  for (int i = 0; i < 500 && pid == 0; ++i) {
    std::ifstream(dir + "/pid") >> pid >> ticks;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(pid, 0);
  BackgroundProcess sleeper{pid, ticks};
  EXPECT_TRUE(IsRunning(sleeper));
  kill(starter, SIGKILL);
  waitpid(starter, nullptr, 0);
  for (int i = 0; i < 500 && IsRunning(sleeper); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(IsRunning(sleeper));
}

TEST(BackgroundProcessTest, WaitsForTheAddressAServerWrites) {
  const std::string dir = testing::MakeTempDir();
  auto server = StartBackground(
      {{"sh", "-c",
        "sleep 0.2; echo 127.0.0.1:4242 >" + dir + "/addr.tmp; mv " + dir +
            "/addr.tmp " + dir + "/addr; exec sleep 600"},
       {},
       dir + "/log"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto address = WaitForAddressFile(*server, dir + "/addr", 30000);
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(*address, "127.0.0.1:4242");
  ASSERT_TRUE(StopBackground(*server, 2000).ok());
}

TEST(BackgroundProcessTest, AServerThatExitsWithoutAnAddressIsNamed) {
  const std::string dir = testing::MakeTempDir();
  auto server = StartBackground({{"sh", "-c", "exit 3"}, {}, dir + "/log"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto address = WaitForAddressFile(*server, dir + "/addr", 30000);
  EXPECT_TRUE(absl::IsFailedPrecondition(address.status())) << address.status();
  std::atomic<bool> stop{true};
  auto sleeper = StartBackground({{"sleep", "600"}, {}, dir + "/log2"});
  ASSERT_TRUE(sleeper.ok());
  EXPECT_TRUE(absl::IsCancelled(
      WaitForAddressFile(*sleeper, dir + "/never", 30000, &stop).status()));
  ASSERT_TRUE(StopBackground(*sleeper, 2000).ok());
}

}  // namespace
}  // namespace phaseloop::process
