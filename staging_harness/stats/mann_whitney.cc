#include "staging_harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::stats {

absl::StatusOr<MannWhitneyResult> MannWhitneyU(absl::Span<const double> a,
                                               absl::Span<const double> b) {
  if (a.empty() || b.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Mann-Whitney U needs two non-empty samples, got ",
                     a.size(), " and ", b.size(), " values"));
  }
  // (value, from the first sample), sorted by value.
  std::vector<std::pair<double, bool>> values;
  values.reserve(a.size() + b.size());
  for (double v : a) values.emplace_back(v, true);
  for (double v : b) values.emplace_back(v, false);
  for (const auto& [v, first] : values) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Mann-Whitney U: a value of the ", first ? "first" : "second",
          " sample is not finite (", v, ")"));
    }
  }
  std::sort(values.begin(), values.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });

  // Ranks from 1, tied values sharing their mean rank; sum of t^3 - t over
  // groups of t ties.
  const double n = static_cast<double>(values.size());
  double rank_sum_a = 0;
  double tie_term = 0;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j].first == values[i].first) ++j;
    const double mean_rank = (static_cast<double>(i + 1 + j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (values[k].second) rank_sum_a += mean_rank;
    }
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double n_a = static_cast<double>(a.size());
  const double n_b = static_cast<double>(b.size());
  MannWhitneyResult result;
  result.u = rank_sum_a - n_a * (n_a + 1) / 2;
  const double mean = n_a * n_b / 2;
  const double variance = n_a * n_b / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) {  // every value ties: no evidence of a difference
    result.z = 0;
    result.p_value = 1;
    return result;
  }
  const double u_max = std::max(result.u, n_a * n_b - result.u);
  result.z = (u_max - mean - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  return result;
}

}  // namespace phaseloop::stats
