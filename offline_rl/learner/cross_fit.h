#ifndef PHASELOOP_OFFLINE_RL_LEARNER_CROSS_FIT_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_CROSS_FIT_H_

// Cross-fitting for the candidate formulation: scores every training module
// with a network that never saw it. The train split's modules are dealt into
// `folds` groups (a seeded shuffle, so the same seed gives the same folds);
// for each group a learner with the run's config trains on the other groups
// and scores the held-out modules. The result is the out-of-fold score table
// that calibrates decisions the final network makes on unseen modules (the
// single-mode abstain margin, abstain_margin.h). Costs `folds` extra
// trainings. libtorch-free header; one thread at a time.

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner_config.h"

namespace phaseloop::offline_rl {

// Each of `modules` modules' fold (0 .. folds-1), in table order: a
// shuffle seeded by `seed`, dealt round-robin. CrossFitScores holds module
// m out of fold CrossFitFolds(config.seed, ...)[m].
std::vector<int> CrossFitFolds(uint64_t seed, int modules, int folds);

// [modules][candidates] for data.train.table's modules, in table order.
// InvalidArgument unless the formulation is "candidate" and 2 <= folds <=
// the number of training modules. `fold_done(i)` (optional) is called after
// fold i (0-based) is scored.
absl::StatusOr<std::vector<float>> CrossFitScores(
    const LearnerConfig& config, const Dataset& data, int folds, int threads,
    const std::function<void(int)>& fold_done);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_CROSS_FIT_H_
