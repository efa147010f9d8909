#ifndef PHASELOOP_STAGING_HARNESS_STATS_PERCENTILE_H_
#define PHASELOOP_STAGING_HARNESS_STATS_PERCENTILE_H_

// The percentile of a sample as the canary judge and the tail test read it
// (one definition, so the judge's effect size and its tail test agree on
// where the tail starts), and the finiteness check every test makes first.

#include <vector>

#include "absl/types/span.h"

namespace phaseloop::stats {

// The p-th percentile (0 <= p <= 100) of `values` by linear interpolation
// between closest ranks (NumPy's default, R's type 7); 0 for no values.
double Percentile(std::vector<double> values, double p);

// The same of values already sorted ascending (not empty).
double PercentileOfSorted(absl::Span<const double> sorted, double p);

// Whether every value is a finite number (no NaN, no infinity).
bool AllFinite(absl::Span<const double> values);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_PERCENTILE_H_
