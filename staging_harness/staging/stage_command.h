#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "staging_harness/profiling/bolt_optimization.h"

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

// --bolt [--bolt-input-seed N] of `stage` and `search`: nullopt without
// --bolt (bad input when a seed is given alone); else BOLT's options, its
// tools checked (FailedPrecondition naming bolt-16), and the relocations
// BOLT needs (profiling::kBoltLinkFlag) added to `link_flags`.
absl::StatusOr<std::optional<profiling::BoltOptions>> BoltFromFlags(
    bool bolt, int64_t input_seed, std::vector<std::string>& link_flags);

// Adds --bolt and --bolt-input-seed to `cmd`; `what` ends --bolt's help.
void AddBoltOptions(CLI::App& cmd, bool& bolt, int64_t& input_seed,
                    const std::string& what);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_COMMAND_H_
