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
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::offline_rl {

struct TrainFlags {
  std::string buffer;
  std::string config;
  std::string out;
  std::string candidates;  // overrides the config's candidates_file
  std::string checkpoint_dir;
  bool resume = false;
  int threads = 1;
  int64_t seed = -1;  // < 0: the config's
  std::string gate_corpus;
  std::string gate_against;
  std::string gate_split = "validation";  // "" = every module of the corpus
  bool json = false;
  // With single_abstain: the cross-fitted (out-of-fold) scores and measured
  // .text sizes of every training module, as JSON, for analysis.
  std::string crossfit_out;
  // The arguments after the program name, recorded in the artifact as the
  // exact training command ("phaseloop train <args>").
  std::vector<std::string> args;
};

// Declares the flags on `app` (phaseloop-train's own CLI).
void AddTrainFlags(CLI::App& app, TrainFlags& flags);

int RunTrain(const TrainFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_COMMAND_H_
