#include "common/process/perf_counter.h"

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

// The counting RunMeasured relies on (enabled at exec, inherited by the
// children the process starts), shown with the task-clock software event,
// which every Linux kernel has, so that it is tested where the machine has
// no hardware PMU as well.
TEST(PerfCounterTest, CountsFromExecIncludingChildren) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(126);
    // The busy loop runs in a grandchild: only an inherited counter sees it.
    execl("/bin/sh", "sh", "-c",
          "sh -c 'i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done'; true",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(go[0]);
  absl::StatusOr<PerfCounter> counter = PerfCounter::OpenForExec(
      pid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock");
  ASSERT_TRUE(counter.ok()) << counter.status();
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  int status = 0;
  rusage usage;
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  absl::StatusOr<PerfCounter::Reading> reading = counter->Read();
  ASSERT_TRUE(reading.ok()) << reading.status();
  // task-clock counts nanoseconds on a CPU: the grandchild's busy loop is
  // nearly all of the user time wait4 reports for the tree, so a counter
  // that missed the grandchild would see a small fraction of it.
  const double cpu_ns = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 +
                        (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3;
  EXPECT_GT(reading->value, 0);
  EXPECT_GT(static_cast<double>(reading->value), 0.5 * cpu_ns)
      << "task-clock " << reading->value << " ns, rusage " << cpu_ns << " ns";
}

TEST(PerfCounterTest, NeverEnabledWithoutExec) {
  // Opened on this process, which does not exec: it never runs.
  absl::StatusOr<PerfCounter> counter = PerfCounter::OpenForExec(
      0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock");
  ASSERT_TRUE(counter.ok()) << counter.status();
  absl::StatusOr<PerfCounter::Reading> reading = counter->Read();
  ASSERT_FALSE(reading.ok());
  EXPECT_EQ(reading.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(reading.status().message().find("task-clock"),
            absl::string_view::npos);
}

TEST(PerfCounterTest, FailureNotesSayWhatToDo) {
  EXPECT_NE(PerfOpenFailureNote("instructions", ENOENT).find("PMU"),
            std::string::npos);
  EXPECT_NE(
      PerfOpenFailureNote("instructions", EACCES).find("perf_event_paranoid="),
      std::string::npos);
  EXPECT_NE(
      PerfOpenFailureNote("cycles", EPERM).find("perf_event_open(cycles)"),
      std::string::npos);
}

}  // namespace
}  // namespace phaseloop::process
