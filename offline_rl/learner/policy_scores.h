#ifndef PHASELOOP_OFFLINE_RL_LEARNER_POLICY_SCORES_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_POLICY_SCORES_H_

// Offline scores of a greedy policy on logged data of a split, from the
// network's outputs (any forward pass: libtorch's or the artifact's). No
// compilation: a measured value is needed for every choice scored.

#include <vector>

#include "offline_rl/learner/dataset.h"

namespace phaseloop::offline_rl {

// Candidate formulation: the candidate the policy picks per module (argmax
// of `outputs`, [modules][candidates] for table.start_states) and what it
// was measured to earn.
struct CandidateScore {
  int modules = 0;
  int unmeasured_choices = 0;   // picks never measured on the module (count 0)
  double mean_value = 0;        // mean over modules of the pick's value
  double oracle_value = 0;      // mean over modules of the best measured value
  double baseline_value = 0;    // mean value of candidate `baseline` (e.g. oz)
  double best_choice_rate = 0;  // share of modules where the pick is the best
};
CandidateScore ScoreCandidateChoices(const CandidateTable& table,
                                     int num_candidates,
                                     const std::vector<float>& outputs,
                                     int baseline);

// Step-wise: share of demonstration states where argmax(outputs) equals the
// demonstrated action (outputs: [demos][actions]). 0 when there are none.
double ActionAgreement(const TransitionSet& demonstrations,
                       const std::vector<float>& outputs);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_POLICY_SCORES_H_
