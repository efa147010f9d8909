#ifndef PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace phaseloop::profiling {

// `phaseloop profile --workload W [--out FILE] [--opt-level O3] [--cc CC]
// [--work-dir DIR] [--json]`: profile_collection.h.
void AddProfileCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::profiling

#endif  // PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COMMAND_H_
