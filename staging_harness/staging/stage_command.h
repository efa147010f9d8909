#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace phaseloop::staging {

// Exit code of `phaseloop stage` when a candidate miscompiled a workload
// (beside common/command/exit_code.h's 0 / 1 internal / 2 bad input; an
// unusable workload is bad input).
inline constexpr int kExitMiscompile = 3;

// `phaseloop stage --workload W|--all --policy P [--baseline P0]
// [--opt-level O3] [--budget-s S] [--buffer DB] [--json] ...`.
void AddStageCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
