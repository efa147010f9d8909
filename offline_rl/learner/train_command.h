#ifndef PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_COMMAND_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_COMMAND_H_

// `phaseloop-train` (what `phaseloop train` execs): trains a policy from a
// replay buffer with a learner config and exports the policy artifact.
//   phaseloop train --buffer B.db --config configs/learner/X.yaml
//                   --out policy.plpolicy [--candidates FILE]
//                   [--checkpoint-dir D [--resume]] [--threads N] [--seed S]
//                   [--gate-corpus DIR --gate-against CURRENT.plpolicy
//                    [--gate-split validation]]
//                   [--json]
// Progress goes to stderr (step, loss, transitions/s); the summary (policy
// version, validation and FQE figures) to stdout, as a table or JSON.
// Exit codes: 0 written, 1 internal failure, 2 bad input (flags, config,
// buffer, data), 3 refused by the publish gate (nothing written).

#include <iosfwd>

#include "CLI/CLI.hpp"
#include "offline_rl/learner/train_pipeline.h"  // TrainFlags

namespace phaseloop::offline_rl {

// Declares the flags on `app` (phaseloop-train's own CLI).
void AddTrainFlags(CLI::App& app, TrainFlags& flags);

// Runs the train_pipeline.h steps for `flags`, progress to `err`, the
// summary to `out`; returns the exit code above.
int RunTrain(const TrainFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_COMMAND_H_
