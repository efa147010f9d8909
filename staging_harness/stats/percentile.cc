#include "staging_harness/stats/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace phaseloop::stats {

double PercentileOfSorted(absl::Span<const double> sorted, double p) {
  const double rank = p / 100 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] +
         (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, p);
}

bool AllFinite(absl::Span<const double> values) {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return std::isfinite(v); });
}

}  // namespace phaseloop::stats
