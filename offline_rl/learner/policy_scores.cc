#include "offline_rl/learner/policy_scores.h"

#include <algorithm>
#include <cmath>

namespace phaseloop::offline_rl {
namespace {

int ArgMax(const float* row, int n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

}  // namespace

CandidateScore ScoreCandidateChoices(const CandidateTable& table,
                                     int num_candidates,
                                     const std::vector<float>& outputs,
                                     int baseline) {
  CandidateScore score;
  score.modules = static_cast<int>(table.module_hashes.size());
  if (score.modules == 0 || num_candidates == 0) return score;
  int best_picks = 0, baseline_count = 0;
  for (int m = 0; m < score.modules; ++m) {
    const float* values = table.values.data() + m * num_candidates;
    const int pick =
        ArgMax(outputs.data() + m * num_candidates, num_candidates);
    float best = NAN;
    for (int c = 0; c < num_candidates; ++c) {
      if (!std::isnan(values[c]) && (std::isnan(best) || values[c] > best)) {
        best = values[c];
      }
    }
    if (std::isnan(values[pick])) {
      ++score.unmeasured_choices;
    } else {
      score.mean_value += values[pick];
      if (values[pick] == best) ++best_picks;
    }
    if (!std::isnan(best)) score.oracle_value += best;
    if (baseline >= 0 && !std::isnan(values[baseline])) {
      score.baseline_value += values[baseline];
      ++baseline_count;
    }
  }
  score.mean_value /= score.modules;
  score.oracle_value /= score.modules;
  if (baseline_count > 0) score.baseline_value /= baseline_count;
  score.best_choice_rate = static_cast<double>(best_picks) / score.modules;
  return score;
}

double ActionAgreement(const TransitionSet& demonstrations,
                       const std::vector<float>& outputs) {
  const int64_t n = demonstrations.size();
  if (n == 0) return 0;
  const int k = demonstrations.num_actions;
  int64_t agree = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (ArgMax(outputs.data() + i * k, k) == demonstrations.actions[i]) {
      ++agree;
    }
  }
  return static_cast<double>(agree) / n;
}

}  // namespace phaseloop::offline_rl
