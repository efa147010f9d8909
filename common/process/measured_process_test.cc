#include "common/process/measured_process.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>

#include "common/process/stop_signals.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

using ::phaseloop::testing::MakeTempDir;
using ::phaseloop::testing::ReadFileOrEmpty;

// A shell loop that keeps one CPU busy for a while (about 0.1-0.3 s).
constexpr char kBusyLoop[] =
    "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done";

MeasuredCommand Shell(const std::string& script) {
  MeasuredCommand command;
  command.argv = {"sh", "-c", script};
  return command;
}

Measurement RunOk(const MeasuredCommand& command) {
  absl::StatusOr<Measurement> m = RunMeasured(command);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Measurement{};
}

TEST(MeasuredProcessTest, ExitCodeIsAMeasurement) {
  Measurement m = RunOk(Shell("exit 3"));
  EXPECT_EQ(m.exit_status, 3);
  EXPECT_EQ(m.term_signal, 0);
  EXPECT_FALSE(m.timed_out);
  EXPECT_GT(m.wall_s, 0);
  EXPECT_GT(m.max_rss_kb, 0);
}

TEST(MeasuredProcessTest, SignalIsReportedAs128PlusIt) {
  Measurement m = RunOk(Shell("kill -TERM $$"));
  EXPECT_EQ(m.term_signal, SIGTERM);
  EXPECT_EQ(m.exit_status, 128 + SIGTERM);
  EXPECT_FALSE(m.timed_out);
}

TEST(MeasuredProcessTest, CallersBlockedAndIgnoredSignalsAreNotInherited) {
  // A server thread blocks SIGTERM for sigwait and may ignore SIGPIPE; the
  // workload must still die of them as it would from a shell.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
  Measurement m = RunOk(Shell("kill -PIPE $$"));
  EXPECT_EQ(m.term_signal, SIGPIPE);
  m = RunOk(Shell("kill -TERM $$"));
  EXPECT_EQ(m.term_signal, SIGTERM);
  signal(SIGPIPE, old_pipe);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &old, nullptr), 0);
}

TEST(MeasuredProcessTest, TimeoutKillsTheWholeGroup) {
  const std::string dir = MakeTempDir();
  MeasuredCommand command =
      Shell("sleep 100 & echo $! > " + dir + "/bg.pid; sleep 100");
  command.timeout_s = 0.5;
  Measurement m = RunOk(command);
  EXPECT_TRUE(m.timed_out);
  EXPECT_EQ(m.term_signal, SIGKILL);
  EXPECT_EQ(m.exit_status, 128 + SIGKILL);
  std::string pid = ReadFileOrEmpty(dir + "/bg.pid");
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(testing::ProcessGone(pid))
      << "the background sleep " << pid << " survived";
}

// The review: Ctrl-C (SIGINT) ended `phaseloop stage`, and the workload's
// run (in a group of its own) went on without its time limit.
TEST(MeasuredProcessTest, AStopSignalKillsTheRunningCommandsGroup) {
  const std::string dir = MakeTempDir();
  const pid_t runner = fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {  // the command being stopped
    KillChildrenOnStopSignals();
    MeasuredCommand command =
        Shell("echo $$ > " + dir + "/run.pid.tmp && mv " + dir +
              "/run.pid.tmp " + dir + "/run.pid; sleep 100");
    command.timeout_s = 200;
    RunMeasured(command).IgnoreError();
    _exit(3);  // not reached: the signal ends it
  }
  const std::string pid = testing::WaitForPidFile(dir + "/run.pid");
  ASSERT_FALSE(pid.empty());
  kill(runner, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(runner, &status, 0), runner);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  // SIGKILL was sent before the command ended; its delivery may lag.
  EXPECT_TRUE(testing::WaitForProcessGone(pid))
      << "the run " << pid << " survived its command";
}

TEST(MeasuredProcessTest, BackgroundLeftoversAreKilledAtExit) {
  const std::string dir = MakeTempDir();
  Measurement m = RunOk(Shell("sleep 100 & echo $! > " + dir + "/bg.pid"));
  EXPECT_EQ(m.exit_status, 0);
  EXPECT_FALSE(m.timed_out);
  std::string pid = ReadFileOrEmpty(dir + "/bg.pid");
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(testing::ProcessGone(pid))
      << "the background sleep " << pid << " survived";
}

TEST(MeasuredProcessTest, RedirectsStandardStreams) {
  const std::string dir = MakeTempDir();
  {
    std::ofstream in(dir + "/in.txt");
    in << "from stdin\n";
  }
  MeasuredCommand command = Shell("cat; echo to-stderr >&2");
  command.stdin_path = dir + "/in.txt";
  command.stdout_path = dir + "/out.txt";
  command.stderr_path = dir + "/err.txt";
  {
    std::ofstream stale(command.stdout_path);
    stale << "stale content that must be truncated away\n";
  }
  EXPECT_EQ(RunOk(command).exit_status, 0);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"), "from stdin\n");
  EXPECT_EQ(ReadFileOrEmpty(dir + "/err.txt"), "to-stderr\n");

  // One file for both streams keeps both, in order.
  command.stderr_path = command.stdout_path;
  command.argv = {"sh", "-c", "echo one; echo two >&2; echo three"};
  EXPECT_EQ(RunOk(command).exit_status, 0);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"), "one\ntwo\nthree\n");
}

TEST(MeasuredProcessTest, DefaultStreamsAreDevNull) {
  // cat of /dev/null ends at once; output goes nowhere.
  EXPECT_EQ(RunOk(Shell("cat")).exit_status, 0);
}

TEST(MeasuredProcessTest, EnvironmentAndWorkingDirectory) {
  const std::string dir = MakeTempDir();
  MeasuredCommand command = Shell("echo \"$PHASELOOP_MEASURED_X\"; pwd -P");
  command.env = {"PHASELOOP_MEASURED_X=42"};
  command.cwd = dir;
  command.stdout_path = dir + "/out.txt";
  EXPECT_EQ(RunOk(command).exit_status, 0);
  char real[PATH_MAX];
  ASSERT_NE(realpath(dir.c_str(), real), nullptr);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"),
            std::string("42\n") + real + "\n");
}

TEST(MeasuredProcessTest, EnvironmentOverridesInheritedValue) {
  setenv("PHASELOOP_MEASURED_Y", "inherited", 1);
  const std::string dir = MakeTempDir();
  MeasuredCommand command = Shell("echo \"$PHASELOOP_MEASURED_Y\"");
  command.stdout_path = dir + "/out.txt";
  EXPECT_EQ(RunOk(command).exit_status, 0);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"), "inherited\n");
  command.env = {"PHASELOOP_MEASURED_Y=over"};
  EXPECT_EQ(RunOk(command).exit_status, 0);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"), "over\n");
  unsetenv("PHASELOOP_MEASURED_Y");
}

TEST(MeasuredProcessTest, PinsToAnAllowedCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;
  const std::string dir = MakeTempDir();
  MeasuredCommand command = Shell("grep Cpus_allowed_list /proc/self/status");
  command.cpu = cpu;
  command.stdout_path = dir + "/out.txt";
  Measurement m = RunOk(command);
  EXPECT_TRUE(m.pinned) << m.pin_note;
  EXPECT_EQ(m.pin_note, "");
  EXPECT_EQ(ReadFileOrEmpty(dir + "/out.txt"),
            "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
}

TEST(MeasuredProcessTest, CpuNotAllowedRunsUnpinnedAndSaysSo) {
  MeasuredCommand command = Shell("exit 0");
  command.cpu = CPU_SETSIZE + 7;
  Measurement m = RunOk(command);
  EXPECT_EQ(m.exit_status, 0);
  EXPECT_FALSE(m.pinned);
  EXPECT_NE(m.pin_note.find("ran unpinned"), std::string::npos) << m.pin_note;
}

TEST(MeasuredProcessTest, BusyLoopUsesUserTimeOfWaitedDescendants) {
  // The busy loop runs in a grandchild the outer shell waits for.
  Measurement m = RunOk(Shell(std::string("sh -c '") + kBusyLoop + "'; true"));
  EXPECT_EQ(m.exit_status, 0);
  EXPECT_GT(m.user_s, 0);
  EXPECT_GT(m.max_rss_kb, 0);
}

TEST(MeasuredProcessTest, HardwareCountsOrSaysWhyNot) {
  MeasuredCommand command = Shell(kBusyLoop);
  command.count_hardware = true;
  Measurement m = RunOk(command);
  EXPECT_EQ(m.exit_status, 0);
  const HardwareCounterSupport support = ProbeHardwareCounters();
  EXPECT_EQ(m.hardware_counted, support.available) << m.hardware_note;
  if (m.hardware_counted) {
    EXPECT_GT(m.instructions, 100000);
    EXPECT_GT(m.cycles, 0);
  } else {
    EXPECT_NE(m.hardware_note, "");
    EXPECT_EQ(m.instructions, 0);
    EXPECT_NE(support.note, "");
  }
  std::cout << "hardware counters here: "
            << (support.available ? "available" : support.note) << "\n";
  // Not asked for: nothing counted, nothing said.
  command.count_hardware = false;
  Measurement plain = RunOk(command);
  EXPECT_FALSE(plain.hardware_counted);
  EXPECT_EQ(plain.hardware_note, "");
}

TEST(MeasuredProcessTest, CommandNotFoundIsAnErrorNamingIt) {
  MeasuredCommand command;
  command.argv = {"phaseloop-no-such-program-xyz"};
  absl::StatusOr<Measurement> m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("'phaseloop-no-such-program-xyz'"),
            absl::string_view::npos)
      << m.status();
  EXPECT_NE(m.status().message().find("PATH"), absl::string_view::npos);

  command.argv = {"/nonexistent/dir/prog"};
  m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound) << m.status();
  EXPECT_NE(m.status().message().find("/nonexistent/dir/prog"),
            absl::string_view::npos);
}

TEST(MeasuredProcessTest, NotExecutableIsAnError) {
  const std::string dir = MakeTempDir();
  const std::string script = dir + "/script.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nexit 0\n";
  }
  chmod(script.c_str(), 0644);
  MeasuredCommand command;
  command.argv = {script};
  absl::StatusOr<Measurement> m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(m.status().message().find(script), absl::string_view::npos);

  // The same on PATH.
  command.argv = {"script.sh"};
  command.env = {"PATH=" + dir};
  m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kPermissionDenied)
      << m.status();
  EXPECT_NE(m.status().message().find("chmod +x"), absl::string_view::npos);

  // Executable: found on the command's PATH and run.
  chmod(script.c_str(), 0755);
  m = RunMeasured(command);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->exit_status, 0);
}

TEST(MeasuredProcessTest, MissingCwdOrInputIsAnError) {
  MeasuredCommand command = Shell("exit 0");
  command.cwd = "/nonexistent/phaseloop/dir";
  absl::StatusOr<Measurement> m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("'sh'"), absl::string_view::npos);
  EXPECT_NE(m.status().message().find(command.cwd), absl::string_view::npos)
      << m.status();

  command.cwd = "";
  command.stdin_path = "/nonexistent/input.txt";
  m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("/nonexistent/input.txt"),
            absl::string_view::npos)
      << m.status();
}

TEST(MeasuredProcessTest, MalformedInputIsAnError) {
  MeasuredCommand command;
  EXPECT_EQ(RunMeasured(command).status().code(),
            absl::StatusCode::kInvalidArgument);
  command = Shell("exit 0");
  command.env = {"NO_EQUALS_SIGN"};
  absl::StatusOr<Measurement> m = RunMeasured(command);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("NO_EQUALS_SIGN"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace phaseloop::process
