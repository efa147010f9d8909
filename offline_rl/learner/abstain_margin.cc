#include "offline_rl/learner/abstain_margin.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"

namespace phaseloop::offline_rl {

int AbstainingChoice(const float* scores, int n, int oz, double margin,
                     const std::vector<bool>& excluded) {
  return policy_runtime::ChooseSingleMode(scores, n, oz, margin, excluded).pick;
}

std::vector<bool> SingleExcludedCandidates(const CandidateTable& table, int k,
                                           int oz, double tolerance,
                                           int max_over_modules,
                                           const std::vector<bool>& counted) {
  std::vector<bool> excluded(std::max(k, 0), false);
  if (max_over_modules < 0 || oz < 0 || oz >= k ||
      table.object_sizes.size() != table.module_hashes.size() * size_t(k)) {
    return excluded;
  }
  std::vector<int> over(k, 0);
  for (size_t m = 0; m < table.module_hashes.size(); ++m) {
    if (!counted.empty() && !counted[m]) continue;
    const double oz_size = table.object_sizes[m * k + oz];
    if (std::isnan(oz_size) || oz_size <= 0) continue;
    for (int c = 0; c < k; ++c) {
      const double size = table.object_sizes[m * k + c];
      if (!std::isnan(size) && size / oz_size - 1 > tolerance) ++over[c];
    }
  }
  for (int c = 0; c < k; ++c) {
    excluded[c] = c != oz && over[c] > max_over_modules;
  }
  return excluded;
}

AbstainPoint ScoreAbstainMargin(
    const CandidateTable& table, int k, const std::vector<float>& outputs,
    int oz, double margin, double tolerance,
    const std::vector<std::vector<bool>>& excluded) {
  static const std::vector<bool> kNone;
  AbstainPoint p;
  p.margin = margin;
  double log_sum = 0;
  const size_t modules = table.module_hashes.size();
  for (size_t m = 0; m < modules; ++m) {
    const int pick = AbstainingChoice(outputs.data() + m * k, k, oz, margin,
                                      excluded.empty() ? kNone : excluded[m]);
    const double oz_size = table.object_sizes[m * k + oz];
    const double size = table.object_sizes[m * k + pick];
    if (std::isnan(oz_size) || std::isnan(size) || size <= 0) continue;
    ++p.modules;
    if (pick != oz) ++p.switched;
    log_sum += std::log(oz_size / size);
    const double excess = size / oz_size - 1;
    p.worst_excess = std::max(p.worst_excess, excess);
    if (excess > tolerance) ++p.over_tolerance;
  }
  if (p.modules > 0) p.size_oz_ratio = std::exp(log_sum / p.modules);
  return p;
}

absl::StatusOr<AbstainChoice> ChooseAbstainMargin(
    const CandidateTable& table, int num_candidates,
    const std::vector<float>& outputs, int oz, double tolerance,
    int max_over_modules, const std::vector<std::vector<bool>>& excluded) {
  const size_t modules = table.module_hashes.size();
  const size_t k = static_cast<size_t>(num_candidates);
  if (num_candidates < 1 || oz < 0 || oz >= num_candidates) {
    return absl::InvalidArgumentError(
        "the abstain margin needs the -Oz candidate (pipeline default<Oz>) "
        "among the candidates");
  }
  if (outputs.size() != modules * k ||
      table.object_sizes.size() != modules * k) {
    return absl::InvalidArgumentError(
        absl::StrCat("abstain margin: ", outputs.size(), " scores and ",
                     table.object_sizes.size(), " sizes for ", modules,
                     " modules x ", k, " candidates"));
  }
  bool shapes_agree = excluded.empty() || excluded.size() == modules;
  for (const std::vector<bool>& row : excluded) {
    shapes_agree = shapes_agree && row.size() == k;
  }
  if (!shapes_agree) {
    return absl::InvalidArgumentError(
        absl::StrCat("abstain margin: the exclusions are not one row of ", k,
                     " candidates for each of the ", modules, " modules"));
  }
  static const std::vector<bool> kNone;
  // The margins where some module's choice changes: just above each
  // module's gap between its best score and -Oz's.
  std::vector<double> margins = {0.0};
  for (size_t m = 0; m < modules; ++m) {
    const float* s = outputs.data() + m * k;
    const int best =
        policy_runtime::ChooseSingleMode(s, int(k), oz, 0,
                                         excluded.empty() ? kNone : excluded[m])
            .best;
    const double gap = s[best] - s[oz];
    if (gap > 0) margins.push_back(std::nextafter(gap, 1e300));
  }
  std::sort(margins.begin(), margins.end());
  margins.erase(std::unique(margins.begin(), margins.end()), margins.end());

  AbstainChoice choice;
  bool found = false;
  for (double margin : margins) {
    const AbstainPoint p = ScoreAbstainMargin(table, num_candidates, outputs,
                                              oz, margin, tolerance, excluded);
    if (p.modules == 0) {
      return absl::FailedPreconditionError(
          "abstain margin: no module has measured object sizes for -Oz and "
          "the policy's picks (candidate episodes without the objective's "
          "final size: final_alloc_size or final_text_size)");
    }
    choice.curve.push_back(p);
    if (p.over_tolerance <= max_over_modules &&
        (!found || p.size_oz_ratio > choice.chosen.size_oz_ratio)) {
      choice.chosen = p;
      found = true;
    }
  }
  // The largest margin always abstains, so it never exceeds -Oz; `found` is
  // false only with a negative max_over_modules.
  if (!found) choice.chosen = choice.curve.back();
  return choice;
}

}  // namespace phaseloop::offline_rl
