#ifndef PHASELOOP_COMMON_PROCESS_MEASURED_PROCESS_H_
#define PHASELOOP_COMMON_PROCESS_MEASURED_PROCESS_H_

// Runs one benchmark process and measures it: wall time, CPU time and peak
// memory from the kernel's accounting, optionally pinned to one CPU and
// counted by the hardware (instructions and cycles, user space). The
// staging harness runs every workload command through it (as `sh -c
// COMMAND`).
//
// The child runs in a process group of its own, with the default signal
// dispositions and an empty signal mask whatever the caller blocks. When it
// exits (or its time limit expires) every process still in its group is
// killed with SIGKILL, so nothing it started in the background outlives the
// measurement or disturbs the next one. A descendant that leaves the group
// (setsid, setpgid) is not tracked.
//
// Thread-safe: no state is shared between calls (except the cached probe),
// and every descriptor it opens is close-on-exec. Like any fork, a child
// forked meanwhile by another thread briefly holds copies of them.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::process {

struct MeasuredCommand {
  // argv[0] without a '/' is looked up on the PATH of the command's
  // environment (the inherited one with `env` applied); with a '/' it is
  // taken as is (relative to `cwd`).
  std::vector<std::string> argv;
  std::string cwd;               // "" = the current directory
  std::vector<std::string> env;  // NAME=VALUE entries over the inherited ones
  // Relative paths are relative to the caller's current directory, not cwd.
  std::string stdin_path;   // "" = /dev/null
  std::string stdout_path;  // "" = /dev/null; created or truncated
  std::string stderr_path;  // "" = /dev/null; created or truncated; may
                            // equal stdout_path (one file, both streams)
  // 0 = none. When it expires the whole process group is killed (SIGKILL)
  // and the Measurement says timed_out.
  double timeout_s = 0;
  // >= 0: pin the child (and so everything it starts) to this CPU. A CPU
  // this process may not use runs unpinned, and Measurement::pin_note says
  // why.
  int cpu = -1;
  // Count instructions and cycles (user space, the command and the children
  // it starts) with perf_event_open. Where the kernel or the machine cannot,
  // the command still runs and Measurement::hardware_note says why.
  bool count_hardware = false;
};

struct Measurement {
  int exit_status = 0;  // the exit code, or 128 + the signal number
  int term_signal = 0;  // the signal that killed it, else 0
  bool timed_out = false;
  // Steady clock, from the moment the child is released to exec until it
  // exits (or is killed at its time limit).
  double wall_s = 0;
  // wait4's rusage of the child: its own time plus that of the descendants
  // it waited for (a shell, `sh -c`, waits for its foreground commands, so
  // they count; background jobs killed at the end do not).
  double user_s = 0;
  double sys_s = 0;
  int64_t max_rss_kb = 0;  // the largest of those processes' peak RSS
  bool pinned = false;
  std::string pin_note;  // why it ran unpinned when a cpu was asked for
  bool hardware_counted = false;  // instructions and cycles are valid
  int64_t instructions = 0;
  int64_t cycles = 0;
  // Why not counted ("perf_event_open(instructions): No such file or
  // directory: no hardware PMU ..."), or a caveat when counted (scaled
  // because the kernel multiplexed the counters); "" otherwise.
  std::string hardware_note;
};

// Runs `command` to completion (or its time limit) and measures it. Fails,
// with a message naming argv[0], only when the command cannot be started:
// empty argv, a malformed env entry, argv[0] not found or not executable,
// cwd or a redirection file missing. A non-zero exit, a signal or a timeout
// is a Measurement.
absl::StatusOr<Measurement> RunMeasured(const MeasuredCommand& command);

// Whether hardware counting works on this machine, and why not when it does
// not (the same notes RunMeasured gives). Probed once per process, cached.
struct HardwareCounterSupport {
  bool available = false;
  std::string note;
};
HardwareCounterSupport ProbeHardwareCounters();

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_MEASURED_PROCESS_H_
