#ifndef PHASELOOP_STAGING_HARNESS_STATS_EXCEEDANCE_TEST_H_
#define PHASELOOP_STAGING_HARNESS_STATS_EXCEEDANCE_TEST_H_

// Do two samples put different shares of their values above a high
// percentile? A test of the tail, where the Mann-Whitney U test (a test of
// location) hardly looks: a canary whose slowest 10 % of requests got 25 %
// slower moves U by little while its p95 moves by 20 %. The threshold is
// the pooled samples' `percentile` (stats::Percentile, the judge's own);
// each side's values strictly above it are counted, and the
// 2x2 table (above / not above, per side) is judged by Fisher's exact test,
// two-sided: the probabilities of every table with the same margins that is
// no more likely than the one observed, under the hypergeometric law.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace phaseloop::stats {

struct ExceedanceResult {
  double threshold = 0;  // the pooled samples' percentile
  int64_t above_a = 0;   // values of `a` strictly above the threshold
  int64_t above_b = 0;
  double p_value = 1;  // Fisher's exact test, two-sided, in [0, 1]
};

// InvalidArgument when a sample is empty, holds a value that is not finite,
// or `percentile` is not in (0, 100).
absl::StatusOr<ExceedanceResult> ExceedanceTest(absl::Span<const double> a,
                                                absl::Span<const double> b,
                                                double percentile);

// Fisher's exact test of the 2x2 table {{a, b}, {c, d}}, two-sided (the
// relative tolerance 1e-7 of R's fisher.test counts tables as likely as
// the observed one). Counts must be >= 0.
double FisherExactTwoSided(int64_t a, int64_t b, int64_t c, int64_t d);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_EXCEEDANCE_TEST_H_
