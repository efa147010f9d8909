#ifndef PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_CONFIG_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_CONFIG_H_

// The learner's hyperparameters: one YAML file (configs/learner/*.yaml) holds
// every setting of a training run, so a run is reproduced from the file, the
// seed and the data alone. Unknown keys, wrong types and out-of-range values
// are refused with the file and field named. Pure parsing; thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::offline_rl {

struct NetworkConfig {
  std::vector<int> hidden = {256, 256};  // ReLU hidden layer widths
};

struct OptimizerConfig {
  int64_t steps = 2000;         // gradient steps
  int batch_size = 256;         // transitions per step
  double learning_rate = 1e-3;  // Adam
  double weight_decay = 0;
  double max_grad_norm = 10;  // 0: no clipping
};

// Cross-fitting of single mode's abstain-to-Oz margin (candidate
// formulation; offline_rl/learner/abstain_margin.h).
struct AbstainConfig {
  int folds = 0;             // 0: no margin (single always takes the best)
  double tolerance = 0.01;   // a module more than this larger than -Oz ...
  int max_over_modules = 0;  // ... may happen on this many held-out modules
  // A candidate measured more than `tolerance` larger than -Oz on more than
  // this many training modules is never single's pick (-1: any may be).
  int candidate_max_over_modules = -1;
};

struct LearnerConfig {
  // "candidate" (one step, actions = candidate pipelines) or "stepwise"
  // (actions = the pass action space, up to max_steps steps).
  std::string formulation = "candidate";
  std::string algorithm = "cql";  // "cql" or "bc"
  // Episodes of this objective are read ("alloc_size": the whole object,
  // the size objective; "text_size": .text alone, the first generation's;
  // "ir_count"; or "runtime": a runtime search's evaluations, candidate
  // formulation only).
  std::string objective = "alloc_size";
  // The artifact's objective; "" = objective. A "runtime" policy learns from
  // final staging/canary rewards over episodes of `objective`.
  std::string policy_objective;
  std::string train_split = "train";
  std::string validation_split = "validation";
  int max_steps = 45;     // stepwise: episodes are cut here
  int default_top_k = 4;  // written to the artifact
  // The candidates file (JSON, `phaseloop candidates mine`); candidate
  // formulation only. Relative paths are relative to the working directory.
  std::string candidates_file;

  // Reward of a transition = step_weight * stored step reward, plus at an
  // episode's last step sum over sources of weight * mean final reward of
  // that source ("staging", "canary") judging the episode.
  // Objective "runtime" (candidate formulation): a runtime-search
  // evaluation's value is weight["staging"] * its staging reward; with a
  // "canary" weight, every canary run reward that names a build is a value
  // too, weight["canary"] * reward, for each module whose choice in that
  // build (its decisions, joined by build_id) differs from the stable
  // build's it was compared with (-O3 stays 0), the mean over runs; a pair
  // both sources measured gets the mean of the two
  // (offline_rl/learner/canary_values.h). Absent or 0:
  // canary runs are not read.
  double step_reward_weight = 1.0;
  std::map<std::string, double> final_reward_weights;
  // The learner trains on reward * reward_scale (normalised reductions are a
  // few hundredths; 100 makes them percent points, so the TD error is not
  // drowned by the CQL penalty). Reported values are unscaled.
  double reward_scale = 1.0;

  NetworkConfig network;
  OptimizerConfig optimizer;
  double gamma = 0.9;                  // discount (stepwise)
  double cql_alpha = 1.0;              // weight of the CQL penalty
  int64_t target_update_period = 100;  // hard target-network copy, in steps
  int64_t checkpoint_every = 500;      // steps between checkpoints (0: never)
  int64_t log_every = 100;             // steps between progress lines

  // Fitted Q evaluation of the trained greedy policy on validation data.
  OptimizerConfig fqe;  // steps 0: FQE skipped

  AbstainConfig single_abstain;

  uint64_t seed = 1;

  // The file's text, verbatim (for the artifact's metadata).
  std::string text;
};

// Parses a config; `source` names it in errors.
absl::StatusOr<LearnerConfig> ParseLearnerConfig(absl::string_view yaml,
                                                 absl::string_view source);

// Reads and parses `path`. NotFound when missing.
absl::StatusOr<LearnerConfig> LoadLearnerConfig(const std::string& path);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_CONFIG_H_
