#ifndef PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_LAUNCHER_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_LAUNCHER_H_

// `phaseloop train ...`: execs the learner binary `phaseloop-train` with the
// same arguments. The `phaseloop` CLI must not link libtorch (it would add
// ~1 s and 166 MB to every command), so the learner is its own binary; this
// library has no libtorch. The binary is looked for, in order:
// $PHASELOOP_TRAIN_BINARY, beside the running `phaseloop` (an install),
// in its Bazel runfiles, and at bazel-bin's ../offline_rl/learner/.
// When none exists: exit code 2 and a message saying how to get it.

#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::offline_rl {

void AddTrainCommand(CLI::App& app, int& exit_code);

// The phaseloop-train path per the search order above; "" when not found.
std::string FindTrainBinary();

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_LAUNCHER_H_
