#ifndef PHASELOOP_STAGING_HARNESS_STATS_MANN_WHITNEY_H_
#define PHASELOOP_STAGING_HARNESS_STATS_MANN_WHITNEY_H_

// The Mann-Whitney U test (Wilcoxon rank-sum): do two samples of run times
// come from the same distribution? Two-sided, by the normal approximation
// with the tie correction and a continuity correction of 0.5 — the same
// figures as scipy.stats.mannwhitneyu(a, b, method="asymptotic"). Reported
// beside the bootstrap interval (speedup.h); it makes no assumption about
// the shape of the times (bimodal timings are common on shared machines).

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace phaseloop::stats {

struct MannWhitneyResult {
  double u = 0;  // U of the first sample: pairs (a_i, b_j) with a_i > b_j,
                 // ties counting one half
  double z = 0;  // (max(U, n_a n_b - U) - n_a n_b / 2 - 0.5) / sigma
  double p_value = 1;  // two-sided, in [0, 1]; 1 when every value ties
};

// InvalidArgument when a sample is empty or holds a value that is not
// finite.
absl::StatusOr<MannWhitneyResult> MannWhitneyU(absl::Span<const double> a,
                                               absl::Span<const double> b);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_MANN_WHITNEY_H_
