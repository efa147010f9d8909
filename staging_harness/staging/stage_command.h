#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"

namespace phaseloop::staging {

// Exit code of `phaseloop stage` when a candidate miscompiled a workload
// (beside common/command/exit_code.h's 0 / 1 internal / 2 bad input; an
// unusable workload is bad input).
inline constexpr int kExitMiscompile = 3;

// `phaseloop stage --workload W|--all --policy P [--baseline P0]
// [--opt-level O3] [--budget-s S] [--buffer DB] [--json] ...`.
void AddStageCommand(CLI::App& app, int& exit_code);

// The candidate's own compiler flags, for `stage` and `search`: --profile
// FILE's -fprofile-instr-use=FILE (none when `profile` is empty), then
// --candidate-cflags' words. Bad input (InvalidArgument naming it): a
// profile that cannot be read, a word that is not a flag, or one that sets
// the level (--opt-level sets both sides') or what a command writes.
absl::StatusOr<std::string> CandidateCflags(const std::string& profile,
                                            const std::string& cflags);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
