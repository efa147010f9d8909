#ifndef PHASELOOP_STAGING_HARNESS_STATS_SIGNED_RANK_H_
#define PHASELOOP_STAGING_HARNESS_STATS_SIGNED_RANK_H_

// The Wilcoxon signed-rank test: are paired differences (log speedups of
// interleaved A/B pairs) centred on 0? Two-sided. Zero differences are
// dropped (Wilcoxon's convention, scipy's zero_method="wilcox"); tied
// magnitudes share their mean rank. Up to kExactMaxPairs non-zero
// differences, the p-value is exact: the share of the 2^n sign assignments
// whose positive rank sum lies at least as far from its mean as the
// observed one, ties kept (computed by counting rank sums). Above that,
// the normal approximation with the tie correction and a continuity
// correction of 0.5 (scipy's method="approx", correction=True).
//
// A pair's two runs share the machine's state at that moment; a test of
// the pairs sees a difference a test of the two samples apart (Mann-Whitney
// U) loses in the spread between pairs.

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace phaseloop::stats {

inline constexpr size_t kExactMaxPairs = 60;

struct SignedRankResult {
  int pairs = 0;       // non-zero differences, the ones ranked
  double w_plus = 0;   // sum of the ranks of the positive differences
  double p_value = 1;  // two-sided, in [0, 1]; 1 with no non-zero one
  bool exact = false;  // p_value is the exact permutation p
};

// InvalidArgument when `differences` is empty or holds a value that is not
// finite.
absl::StatusOr<SignedRankResult> WilcoxonSignedRank(
    absl::Span<const double> differences);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_SIGNED_RANK_H_
