#ifndef PHASELOOP_OFFLINE_RL_LEARNER_ABSTAIN_MARGIN_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_ABSTAIN_MARGIN_H_

// single mode's abstain-to-Oz rule for candidate policies: the driver takes
// the network's best candidate only when its score beats the -Oz candidate's
// score by at least the artifact's margin, and -Oz otherwise. A confident
// pick keeps the gain; an unsure one cannot make the module larger than -Oz.
//
// The margin is chosen on scores the network gave modules it was not trained
// on (out-of-fold scores from cross-fitting, offline_rl/learner/cross_fit.h),
// against those modules' measured object sizes S (CandidateTable::
// object_sizes: allocated bytes for an alloc_size policy, .text for a
// text_size one): the margin with the best geomean S_Oz/S among those that
// leave at most `max_over_modules` modules more than `tolerance` larger than
// -Oz. Pure arithmetic; thread-safe.
//
// A candidate can also be excluded from single mode altogether
// (SingleExcludedCandidates, the config's
// single_abstain.candidate_max_over_modules): one measured more than
// `tolerance` larger than -Oz on too many training modules is not trusted
// unmeasured, however sure the network is. The margin is then chosen with
// single picking among the others, each held-out module's exclusions
// learned from the other folds' modules, so that the held-out figures
// stay held out.

#include <vector>

#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"

namespace phaseloop::offline_rl {

// The candidate single mode picks from `scores` (n outputs):
// policy_runtime::ChooseSingleMode's pick, the rule the driver applies.
// `excluded`: empty (none) or [n].
int AbstainingChoice(const float* scores, int n, int oz, double margin,
                     const std::vector<bool>& excluded = {});

// The candidates ([num_candidates], true: excluded) measured more than
// `tolerance` larger than -Oz (table.object_sizes) on more than
// `max_candidate_over` of the `counted` modules ([modules]; empty: all); a
// negative `max_candidate_over` excludes none. -Oz itself is never
// excluded. A cell without a size does not count against its candidate, so
// a candidate measured on few modules is judged on those few.
std::vector<bool> SingleExcludedCandidates(
    const CandidateTable& table, int num_candidates, int oz, double tolerance,
    int max_candidate_over, const std::vector<bool>& counted = {});

// The scored modules under one margin.
struct AbstainPoint {
  double margin = 0;
  int modules = 0;           // modules with measured -Oz and pick sizes
  int switched = 0;          // modules where the pick is not -Oz
  double size_oz_ratio = 1;  // geomean S_Oz / S_pick (> 1: smaller)
  int over_tolerance = 0;    // modules more than `tolerance` larger than -Oz
  double worst_excess = 0;   // max over modules of S_pick / S_Oz - 1
};

// The modules' picks under `margin`. Shapes as for ChooseAbstainMargin,
// which must hold (unchecked here).
AbstainPoint ScoreAbstainMargin(
    const CandidateTable& table, int num_candidates,
    const std::vector<float>& outputs, int oz, double margin, double tolerance,
    const std::vector<std::vector<bool>>& excluded = {});

struct AbstainChoice {
  AbstainPoint chosen;
  // Every margin tried, ascending (the first is 0: never abstain).
  std::vector<AbstainPoint> curve;
};

// Chooses the margin from `outputs` ([modules][num_candidates], the scores
// for table.start_states) and table.object_sizes. InvalidArgument when `oz` is
// out of range or the shapes disagree; FailedPrecondition when no module has
// measured object sizes. `excluded`: empty (none), or one row per module
// ([modules][num_candidates]): the candidates single may not take on that
// module (cross-fitting: learned without the module's fold).
absl::StatusOr<AbstainChoice> ChooseAbstainMargin(
    const CandidateTable& table, int num_candidates,
    const std::vector<float>& outputs, int oz, double tolerance,
    int max_over_modules, const std::vector<std::vector<bool>>& excluded = {});

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_ABSTAIN_MARGIN_H_
