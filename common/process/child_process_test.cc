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

}  // namespace
}  // namespace phaseloop::process
