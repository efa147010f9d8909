#include "staging_harness/stats/exceedance_test.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "staging_harness/stats/percentile.h"

namespace phaseloop::stats {
namespace {

double LogChoose(int64_t n, int64_t k) {
  return std::lgamma(static_cast<double>(n) + 1) -
         std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

}  // namespace

double FisherExactTwoSided(int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t row1 = a + b, row2 = c + d, col1 = a + c;
  const int64_t lo = std::max<int64_t>(0, col1 - row2);
  const int64_t hi = std::min(col1, row1);
  const double log_total = LogChoose(row1 + row2, col1);
  auto log_p = [&](int64_t x) {
    return LogChoose(row1, x) + LogChoose(row2, col1 - x) - log_total;
  };
  const double observed = log_p(a);
  double p = 0;
  for (int64_t x = lo; x <= hi; ++x) {
    const double lp = log_p(x);
    if (lp <= observed + 1e-7) p += std::exp(lp);
  }
  return std::min(1.0, p);
}

absl::StatusOr<ExceedanceResult> ExceedanceTest(absl::Span<const double> a,
                                                absl::Span<const double> b,
                                                double percentile) {
  if (a.empty() || b.empty()) {
    return absl::InvalidArgumentError("exceedance test: a sample is empty");
  }
  if (!AllFinite(a) || !AllFinite(b)) {
    return absl::InvalidArgumentError("exceedance test: a value is not finite");
  }
  if (!(percentile > 0 && percentile < 100)) {
    return absl::InvalidArgumentError(
        "exceedance test: the percentile must be in (0, 100)");
  }
  std::vector<double> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::sort(pooled.begin(), pooled.end());
  ExceedanceResult result;
  result.threshold = PercentileOfSorted(pooled, percentile);
  auto above = [&](absl::Span<const double> s) {
    return static_cast<int64_t>(std::count_if(
        s.begin(), s.end(), [&](double v) { return v > result.threshold; }));
  };
  result.above_a = above(a);
  result.above_b = above(b);
  const int64_t na = static_cast<int64_t>(a.size());
  const int64_t nb = static_cast<int64_t>(b.size());
  result.p_value = FisherExactTwoSided(result.above_a, na - result.above_a,
                                       result.above_b, nb - result.above_b);
  return result;
}

}  // namespace phaseloop::stats
