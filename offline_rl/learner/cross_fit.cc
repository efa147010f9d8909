#include "offline_rl/learner/cross_fit.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "offline_rl/learner/learner.h"

namespace phaseloop::offline_rl {
namespace {

// The modules' indices in a seeded shuffle; the module at position i is in
// fold i % folds.
std::vector<int> ShuffledModules(uint64_t seed, int modules) {
  std::vector<int> order(modules);
  for (int m = 0; m < modules; ++m) order[m] = m;
  std::mt19937_64 rng(seed);
  for (int i = modules - 1; i > 0; --i) {  // Fisher-Yates, fixed per seed
    std::swap(order[i], order[static_cast<int>(rng() % (i + 1))]);
  }
  return order;
}

}  // namespace

std::vector<int> CrossFitFolds(uint64_t seed, int modules, int folds) {
  const std::vector<int> order = ShuffledModules(seed, modules);
  std::vector<int> fold_of(modules, 0);
  for (int i = 0; i < modules; ++i) fold_of[order[i]] = i % folds;
  return fold_of;
}

absl::StatusOr<std::vector<float>> CrossFitScores(
    const LearnerConfig& config, const Dataset& data, int folds, int threads,
    const std::function<void(int)>& fold_done) {
  const CandidateTable& table = data.train.table;
  const int modules = static_cast<int>(table.module_hashes.size());
  const int k = static_cast<int>(data.candidates.size());
  const int dim = data.train.transitions.state_dim;
  if (data.formulation != "candidate") {
    return absl::InvalidArgumentError(
        "cross-fitting needs the candidate formulation");
  }
  if (folds < 2 || folds > modules) {
    return absl::InvalidArgumentError(
        absl::StrCat("cross-fitting needs 2 <= folds <= training modules (",
                     modules, "); got ", folds));
  }
  const std::vector<int> order = ShuffledModules(config.seed, modules);

  std::vector<float> scores(static_cast<size_t>(modules) * k, 0.0f);
  for (int f = 0; f < folds; ++f) {
    std::vector<int> train_rows, held_out;
    for (int i = 0; i < modules; ++i) {
      (i % folds == f ? held_out : train_rows).push_back(order[i]);
    }
    Dataset fold;
    fold.formulation = data.formulation;
    fold.action_names = data.action_names;
    fold.action_space_version = data.action_space_version;
    fold.candidates = data.candidates;
    fold.snapshot = absl::StrCat(data.snapshot, " fold ", f, "/", folds);
    FillCandidateSets(table, train_rows, k, dim, &fold.train.transitions,
                      &fold.train.demonstrations);
    auto learner = Learner::Create(config, fold, threads);
    if (!learner.ok()) return learner.status();
    absl::Status trained =
        (*learner)->Train(config.optimizer.steps, "", nullptr);
    if (!trained.ok()) return trained;
    std::vector<float> states;
    states.reserve(held_out.size() * dim);
    for (int m : held_out) {
      const float* s = table.start_states.data() + static_cast<size_t>(m) * dim;
      states.insert(states.end(), s, s + dim);
    }
    const std::vector<float> out = (*learner)->Forward(states);
    for (size_t i = 0; i < held_out.size(); ++i) {
      std::copy(out.begin() + i * k, out.begin() + (i + 1) * k,
                scores.begin() + static_cast<size_t>(held_out[i]) * k);
    }
    if (fold_done) fold_done(f);
  }
  return scores;
}

}  // namespace phaseloop::offline_rl
