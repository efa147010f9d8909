#include "common/process/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/process/stop_signals.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

using ::phaseloop::testing::MakeTempDir;
using ::phaseloop::testing::ReadFileOrEmpty;

TEST(SubprocessTest, ExitStatusTimeLimitAndOutput) {
  absl::StatusOr<ProcessResult> ok =
      RunProcess({{"sh", "-c", "echo out; echo err >&2; exit 3"}, "", {}, 0});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->exit_code, 3);
  EXPECT_FALSE(ok->timed_out);
  EXPECT_EQ(ok->output, "out\nerr\n");

  absl::StatusOr<ProcessResult> slow =
      RunProcess({{"sleep", "30"}, "", {}, 0.2});
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_TRUE(slow->timed_out);

  // A script's own missing command is its exit 127, not "cannot run".
  absl::StatusOr<ProcessResult> inner =
      RunProcess({{"sh", "-c", "echo No such file here; no-such-inner-command"},
                  "",
                  {},
                  10});
  ASSERT_TRUE(inner.ok()) << inner.status();
  EXPECT_EQ(inner->exit_code, 127);

  for (double limit : {0.0, 10.0}) {  // env alone, and env running timeout
    absl::StatusOr<ProcessResult> missing =
        RunProcess({{"no-such-program-here"}, "", {}, limit});
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition)
        << limit;
  }
  absl::StatusOr<ProcessResult> missing =
      RunProcess({{"no-such-program-here"}, "", {}, 0});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition)
      << (missing.ok() ? absl::StrCat(missing->exit_code, " ", missing->output)
                       : "");

  // A command killed by a signal: 128 + the signal, as a shell says.
  absl::StatusOr<ProcessResult> killed =
      RunProcess({{"sh", "-c", "kill -9 $$"}, "", {}, 0});
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->exit_code, 128 + SIGKILL);
  // The same under a time limit (the OOM killer's SIGKILL looks so): timeout
  // passes the 137 on, which is not a timeout before the limit.
  absl::StatusOr<ProcessResult> killed_in_time =
      RunProcess({{"sh", "-c", "kill -9 $$"}, "", {}, 30});
  ASSERT_TRUE(killed_in_time.ok()) << killed_in_time.status();
  EXPECT_EQ(killed_in_time->exit_code, 128 + SIGKILL);
  EXPECT_FALSE(killed_in_time->timed_out);
}

// A build runs under timeout(1), in a process group of its own that a
// terminal's Ctrl-C does not reach: `phaseloop stage` stopped by SIGINT left
// the build running until its own time limit.
TEST(SubprocessTest, AStopSignalKillsACommandUnderATimeLimit) {
  const std::string dir = MakeTempDir();
  const pid_t runner = fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {  // the command being stopped
    KillChildrenOnStopSignals();
    ProcessSpec spec;
    spec.argv = {"sh", "-c",
                 "sleep 100 & echo $! > " + dir + "/run.pid.tmp && mv " + dir +
                     "/run.pid.tmp " + dir + "/run.pid; wait"};
    spec.timeout_seconds = 200;
    RunProcess(spec).IgnoreError();
    _exit(3);  // not reached: the signal ends it
  }
  const std::string pid = testing::WaitForPidFile(dir + "/run.pid");
  ASSERT_FALSE(pid.empty());
  kill(runner, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(runner, &status, 0), runner);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_TRUE(testing::WaitForProcessGone(pid))
      << "the build's process " << pid << " survived";
  if (!testing::ProcessGone(pid)) kill(std::stoi(pid), SIGKILL);
}

}  // namespace
}  // namespace phaseloop::process
