#ifndef PHASELOOP_COMMON_PROCESS_BACKGROUND_PROCESS_H_
#define PHASELOOP_COMMON_PROCESS_BACKGROUND_PROCESS_H_

// Long-running child processes a controller starts and must be able to stop
// again, even after it was itself killed and restarted: a service instance,
// a reward engine, a policy store. Each child
//   - runs argv (looked up on PATH) with stdout and stderr appended to a log
//     file and stdin from /dev/null, in its own process group;
//   - gets SIGTERM when the thread that started it dies (PR_SET_PDEATHSIG),
//     so a SIGKILLed controller leaves nothing serving for long;
//   - is identified by (pid, start time in clock ticks since boot, from
//     /proc/<pid>/stat), so a pid the kernel recycled is never mistaken for
//     it and never signalled.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::process {

struct BackgroundSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // extra NAME=VALUE entries
  std::string log_path;          // appended to; required
  std::string stdout_path;       // stdout alone here (truncated), if given
};

struct BackgroundProcess {
  pid_t pid = 0;
  int64_t start_ticks = 0;
};

// Starts the process; FailedPrecondition when argv[0] is not found or the
// log cannot be opened (naming it).
absl::StatusOr<BackgroundProcess> StartBackground(const BackgroundSpec& spec);

// /proc/<pid>/stat's start time, or NotFound when no such process exists.
absl::StatusOr<int64_t> ProcessStartTicks(pid_t pid);

// True while the process exists with the same start time (a zombie of ours
// counts as gone: it is reaped here).
bool IsRunning(const BackgroundProcess& process);

// For a process started here: its exit code once it has ended (reaping it),
// 128 + the signal that killed it, or nullopt while it runs. A process that
// is not our child (started before a restart) has no status to read: -1
// once it is gone. Call this, not IsRunning, when the status matters
// (IsRunning reaps and drops it).
std::optional<int> ExitStatusIfEnded(const BackgroundProcess& process);

// SIGTERM to its process group, then SIGKILL after `grace_ms` if it is still
// there; reaps it when it is our child. OK when it is already gone (or the
// pid now belongs to another process, which is left alone).
absl::Status StopBackground(const BackgroundProcess& process,
                            int64_t grace_ms = 5000);

// Waits for a server started in the background to write its address to
// `path` (what `--address-file`/`--bootstrap-file` do: one line, written
// atomically) and returns it without trailing whitespace.
// FailedPrecondition when the process exits first, DeadlineExceeded when
// nothing came within `timeout_ms`, Cancelled when `*stop` becomes true.
absl::StatusOr<std::string> WaitForAddressFile(
    const BackgroundProcess& process, const std::string& path,
    int64_t timeout_ms, const std::atomic<bool>* stop = nullptr);

// Starts a server that writes its address to `address_file` (removed
// first) and waits for it (WaitForAddressFile). On failure the process is
// stopped and the error names the file and the log to read.
absl::StatusOr<std::string> StartServer(const BackgroundSpec& spec,
                                        const std::string& address_file,
                                        BackgroundProcess* started,
                                        int64_t timeout_ms = 30000);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_BACKGROUND_PROCESS_H_
