#include "common/process/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

namespace phaseloop::process {
namespace {

TEST(ChildProcessTest, ReportsWhatTheWorkReturns) {
  ChildOutcome outcome = RunInChild(
      [] { return absl::StatusOr<std::string>(std::string(200000, 'r')); },
      10000);
  EXPECT_EQ(outcome.kind, ChildOutcome::kOk);
  EXPECT_EQ(outcome.report, std::string(200000, 'r'));
}

TEST(ChildProcessTest, ErrorsComeBackAsMessages) {
  ChildOutcome outcome = RunInChild(
      [] {
        return absl::StatusOr<std::string>(
            absl::InternalError("verifier_failed: bad"));
      },
      10000);
  EXPECT_EQ(outcome.kind, ChildOutcome::kFailed);
  EXPECT_EQ(outcome.message, "verifier_failed: bad");
}

TEST(ChildProcessTest, CrashIsAValue) {
  ChildOutcome outcome = RunInChild(
      []() -> absl::StatusOr<std::string> {
        std::raise(SIGSEGV);
        return std::string("unreachable");
      },
      10000);
  EXPECT_EQ(outcome.kind, ChildOutcome::kCrashed);
  EXPECT_NE(outcome.message.find("optimizer_crashed"), std::string::npos);
}

TEST(ChildProcessTest, ExitWithoutResultIsACrash) {
  ChildOutcome outcome =
      RunInChild([]() -> absl::StatusOr<std::string> { _exit(1); }, 10000);
  EXPECT_EQ(outcome.kind, ChildOutcome::kCrashed);
}

TEST(ChildProcessTest, HangIsKilledAtTheLimit) {
  ChildOutcome outcome = RunInChild(
      []() -> absl::StatusOr<std::string> {
        for (;;) pause();
      },
      300);
  EXPECT_EQ(outcome.kind, ChildOutcome::kTimedOut);
  EXPECT_NE(outcome.message.find("300 ms"), std::string::npos);
}

// Another process holding the child's end of the pipe (a sibling forked
// from another thread inherits it) must not turn a crash into a timeout or
// make a finished child wait: here the child's own child keeps the pipe
// open long past the limit.
TEST(ChildProcessTest, APipeHeldElsewhereDoesNotHideTheChildsEnd) {
  int pid_pipe[2];
  ASSERT_EQ(pipe(pid_pipe), 0);
  for (bool crash : {true, false}) {
    ChildOutcome outcome = RunInChild(
        [&]() -> absl::StatusOr<std::string> {
          pid_t holder = fork();
          if (holder == 0) {
            sleep(60);
            _exit(0);
          }
          (void)!write(pid_pipe[1], &holder, sizeof holder);
          if (crash) std::raise(SIGSEGV);
          return std::string("done");
        },
        5000);
    pid_t holder = 0;
    ASSERT_EQ(read(pid_pipe[0], &holder, sizeof holder),
              static_cast<ssize_t>(sizeof holder));
    kill(holder, SIGKILL);
    if (crash) {
      EXPECT_EQ(outcome.kind, ChildOutcome::kCrashed) << outcome.message;
    } else {
      EXPECT_EQ(outcome.kind, ChildOutcome::kOk) << outcome.message;
      EXPECT_EQ(outcome.report, "done");
    }
  }
  close(pid_pipe[0]);
  close(pid_pipe[1]);
}

}  // namespace
}  // namespace phaseloop::process
