#ifndef PHASELOOP_COMMON_PROCESS_SUBPROCESS_H_
#define PHASELOOP_COMMON_PROCESS_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::process {

// One external command (apt-get, dpkg-source, configure, csmith, a test
// binary). argv[0] is looked up on PATH.
struct ProcessSpec {
  std::vector<std::string> argv;
  std::string cwd;               // "" = the current directory
  std::vector<std::string> env;  // extra NAME=VALUE entries
  double timeout_seconds = 0;    // 0 = no limit
};

struct ProcessResult {
  int exit_code = 0;
  bool timed_out = false;
  std::string output;  // stdout and stderr interleaved, the last 64 KiB
};

// Runs the command to completion (or its time limit: TERM, then KILL a second
// later) with stdin from /dev/null. Failing to start is an error; a non-zero
// exit is a result. Thread-safe. Killed with this process's stop signals
// after KillChildrenOnStopSignals (common/process/stop_signals.h).
absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec);

// The first `max_lines` lines of `text` that look like errors ("error:",
// "fatal", "cannot"), else its last lines: a short reason for a manifest.
std::string ShortReason(const std::string& text, int max_lines = 3);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_SUBPROCESS_H_
