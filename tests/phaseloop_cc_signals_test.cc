// phaseloop-cc signalled alone (a build tool stopping one job, a closed
// terminal): the real binaries, a hung optimiser child, the files it staged.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/phaseloop_cc_fixture.h"

namespace phaseloop {
namespace {

// The names in dir_ that hold `part`.
std::vector<std::string> NamesWith(const std::string& dir,
                                   const std::string& part) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(part) != std::string::npos) names.push_back(name);
  }
  return names;
}

// Processes whose command line mentions `part` (an orphan optimiser keeps
// the wrapper's argv).
int ProcessesMentioning(const std::string& part) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline =
        testing::ReadFileOrEmpty(entry.path().string() + "/cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(part) != std::string::npos) ++count;
  }
  return count;
}

// A build tool stopping one compile signals the wrapper alone. The
// optimiser's child (hung here, as a long -Oz compile is busy) must not run
// on as an orphan, nor its staged object or dependency file stay behind:
// the wrapper dies of the signal as clang does, leaving nothing.
TEST_F(PhaseloopCcTest, ASignalToTheWrapperAloneLeavesNothingRunningOrWritten) {
  for (int signal_number : {SIGINT, SIGHUP, SIGQUIT, SIGTERM}) {
    SCOPED_TRACE(strsignal(signal_number));
    const std::string object = dir_ + "/stopped.o";
    std::vector<std::string> argv = {
        "env",
        "-C",
        dir_,
        "PHASELOOP_SPOOL=" + spool_,
        "PHASELOOP_CONFIG=" + dir_ + "/empty.conf",
        "PHASELOOP_OUTCOME_CACHE=" + dir_ + "/outcomes",
        "PHASELOOP_TEST_INJECT_FAULT=hang",
        "PHASELOOP_TIMEOUT_MS=600000",
        cc_,
        "-O2",
        "-MD",
        "-c",
        fixtures_["hashtable.c"],
        "-o",
        object};
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
    // The child's frontend has written the staged dependency file: the
    // optimiser is at work (hung) in its child.
    bool staged = false;
    for (int i = 0; i < 1200 && !staged; ++i) {
      staged = !NamesWith(dir_, "stopped.d.phaseloop-").empty();
      if (!staged) usleep(50 * 1000);
    }
    ASSERT_TRUE(staged) << "the optimiser never staged its dependency file";
    ASSERT_EQ(ProcessesMentioning(object), 2);  // the wrapper and its child
    ASSERT_EQ(kill(pid, signal_number), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_EQ(ProcessesMentioning(object), 0);
    EXPECT_EQ(NamesWith(dir_, "stopped."), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace phaseloop
