#ifndef PHASELOOP_COMMON_COMMAND_EXIT_CODE_H_
#define PHASELOOP_COMMON_COMMAND_EXIT_CODE_H_

#include "absl/status/status.h"

namespace phaseloop::command {

// Every phaseloop command's exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // internal or environment failure
inline constexpr int kExitBadInput = 2;  // what the user can fix: flags, files
// Stopped by SIGINT/SIGTERM with everything done so far kept: the same
// command again resumes or completes it (sysexits' EX_TEMPFAIL).
inline constexpr int kExitStopped = 75;

// The exit code of a command that failed with `status`, for commands whose
// input files and flags are named in their errors: 0 ok; 2 for what the
// user can fix (invalid, missing, already existing, unusable or damaged
// input, an unsupported request); 1 for everything else (internal or
// environment failures). Commands where a damaged file is the tool's own
// state (the policy store) map DataLoss to 1 themselves.
int ExitCodeOf(const absl::Status& status);

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_EXIT_CODE_H_
