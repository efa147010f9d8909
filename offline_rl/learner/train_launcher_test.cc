#include "offline_rl/learner/train_launcher.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::offline_rl {
namespace {

TEST(TrainLauncherTest, EnvironmentOverrideAndMissingBinary) {
  const std::string built =
      std::filesystem::absolute("offline_rl/learner/phaseloop-train").string();
  ASSERT_EQ(setenv("PHASELOOP_TRAIN_BINARY", built.c_str(), 1), 0);
  EXPECT_EQ(FindTrainBinary(), built);
  ASSERT_EQ(setenv("PHASELOOP_TRAIN_BINARY", "/nonexistent/phaseloop-train", 1),
            0);
  EXPECT_EQ(FindTrainBinary(), "");
  unsetenv("PHASELOOP_TRAIN_BINARY");
}

// `phaseloop train ARGS` runs phaseloop-train ARGS: here through a CLI app
// like the main one, in a child process (the callback execs).
TEST(TrainLauncherTest, ExecsTheLearnerWithTheArguments) {
  const std::string built =
      std::filesystem::absolute("offline_rl/learner/phaseloop-train").string();
  ASSERT_EQ(setenv("PHASELOOP_TRAIN_BINARY", built.c_str(), 1), 0);
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string out_file = dir + "/out.txt";
  fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen(out_file.c_str(), "w", stdout);
    freopen(out_file.c_str(), "a", stderr);
    CLI::App app;
    int exit_code = 0;
    AddTrainCommand(app, exit_code);
    const char* argv[] = {"phaseloop",       "train",    "--buffer",
                          "/nonexistent.db", "--config", "/nonexistent.yaml",
                          "--out",           "x"};
    try {
      app.parse(8, const_cast<char**>(argv));
    } catch (const CLI::ParseError&) {
      _exit(100);
    }
    _exit(101);  // exec did not happen
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  // phaseloop-train ran, read the flags and refused the missing config.
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string output = phaseloop::testing::ReadFileOrEmpty(out_file);
  EXPECT_NE(output.find("phaseloop train: cannot read /nonexistent.yaml; give "
                        "an existing file (configs/learner/"),
            std::string::npos)
      << output;
  unsetenv("PHASELOOP_TRAIN_BINARY");
}

// An installation without phaseloop-train: `train --help` still says what
// the command is (exit 0; it was exit 2, bad input), and a run is exit 1
// (the installation's fault, not the user's flags).
TEST(TrainLauncherTest, AMissingLearnerIsNamedAndHelpStillAnswers) {
  ASSERT_EQ(setenv("PHASELOOP_TRAIN_BINARY", "/nonexistent/phaseloop-train", 1),
            0);
  for (const char* flag : {"--help", "--buffer"}) {
    CLI::App app;
    int exit_code = -1;
    AddTrainCommand(app, exit_code);
    const char* argv[] = {"phaseloop", "train", flag, "b.db"};
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    app.parse(4, const_cast<char**>(argv));
    const std::string out = ::testing::internal::GetCapturedStdout();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("cannot find phaseloop-train"), std::string::npos)
        << err;
    if (std::string(flag) == "--help") {
      EXPECT_EQ(exit_code, 0);
      EXPECT_NE(out.find("learn a policy"), std::string::npos) << out;
    } else {
      EXPECT_EQ(exit_code, 1);
    }
  }
  unsetenv("PHASELOOP_TRAIN_BINARY");
}

}  // namespace
}  // namespace phaseloop::offline_rl
