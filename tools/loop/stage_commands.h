#ifndef PHASELOOP_TOOLS_LOOP_STAGE_COMMANDS_H_
#define PHASELOOP_TOOLS_LOOP_STAGE_COMMANDS_H_

// What the loop's stages share (loop_stages.cc, lab_stages.cc): the exit
// codes of the `phaseloop` commands they run, where a stage's log and each
// command's JSON go, running one command and reading what it printed, and a
// stage's own buffer file — merged into the replay buffer, and marked once
// its command finished so a resumed stage merges it again instead of
// running the command anew.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/command/exit_code.h"
#include "nlohmann/json.hpp"
#include "tools/loop/loop_stages.h"

namespace phaseloop::loop {

// Exit codes of the commands the stages run (their --help says so).
inline constexpr int kExitOk = 0;
inline constexpr int kExitStopped = command::kExitStopped;
inline constexpr int kTrainGateRefused = 3;
inline constexpr int kStageMiscompile = 3;
inline constexpr int kCanaryRolledBack = 3;
inline constexpr int kCanaryRefused = 4;
inline constexpr int kCanaryAborted = 5;

// A number as a command-line argument ("%g").
std::string Number(double value);

// ITERATION_DIR/<stage>.log (every command of the stage appends its stderr)
// and ITERATION_DIR/<what>.json (one command's stdout).
std::string LogPath(const StageContext& ctx, const std::string& stage);
std::string OutPath(const StageContext& ctx, const std::string& what);

// Runs one command of a stage; its stderr appended to the stage's log.
absl::StatusOr<StageExecutor::Result> RunCommand(
    const StageContext& ctx, StageExecutor& executor, const std::string& stage,
    const std::string& what, const std::vector<std::string>& argv);

// A command's JSON; DataLoss naming the file when it is not JSON.
absl::StatusOr<nlohmann::json> ReadJson(const std::string& path);

// "WHAT exited N; see LOG".
StageOutcome Failed(const StageContext& ctx, const std::string& stage,
                    const std::string& what, int exit_code);

// Merges an iteration's own buffer file into the replay buffer (idempotent:
// a merge interrupted and redone adds nothing twice).
absl::StatusOr<StageOutcome> MergeBuffer(const StageContext& ctx,
                                         StageExecutor& executor,
                                         const std::string& stage,
                                         const std::string& file);

// Removes a file and, for a buffer, its SQLite -wal and -shm beside it: a
// fresh start (an interrupted attempt's rows are never merged).
void RemoveFile(const std::string& path);

// A stage's command that ran to its end leaves its exit code here, beside
// the stage's own buffer file: a stage resumed after it (its merge
// interrupted, or the loop killed before it saved) merges that file again
// (idempotent) instead of running the command anew, whose new build and
// episode ids would put a second copy of its rows in the buffer. Dropped
// whenever the command's output cannot be used, so a rerun runs it again.
std::string FinishedPath(const StageContext& ctx, const std::string& stage);
// The exit code FinishedPath holds, when it and `db` exist.
std::optional<int> FinishedExitCode(const StageContext& ctx,
                                    const std::string& stage,
                                    const std::string& db);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_STAGE_COMMANDS_H_
