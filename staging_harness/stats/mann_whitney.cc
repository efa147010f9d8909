#include "staging_harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::stats {
namespace {

// The exact two-sided p of a rank sum: `doubled_ranks` are the pooled
// values' midranks times two (integers), `m` the size of one sample and
// `observed` its doubled rank sum. Counts, for every doubled sum s, the
// subsets of m values summing to s (a knapsack over the values, in
// doubles: C(60, 30) ~ 1.2e17 is held to 16 digits), then sums those at
// least as far from the mean m (n + 1) as the observed one.
double ExactRankSumP(const std::vector<int>& doubled_ranks, int m,
                     int64_t observed) {
  const int n = static_cast<int>(doubled_ranks.size());
  const int max_sum = 2 * n * m;  // each doubled rank is at most 2n
  std::vector<std::vector<double>> ways(m + 1,
                                        std::vector<double>(max_sum + 1, 0));
  ways[0][0] = 1;
  for (int i = 0; i < n; ++i) {
    const int r = doubled_ranks[i];
    for (int k = std::min(i + 1, m); k >= 1; --k) {
      const std::vector<double>& from = ways[k - 1];
      std::vector<double>& to = ways[k];
      for (int s = max_sum; s >= r; --s) {
        if (from[s - r] != 0) to[s] += from[s - r];
      }
    }
  }
  const int64_t mean = int64_t{m} * (n + 1);
  const int64_t distance = std::abs(observed - mean);
  double total = 0;
  double as_far = 0;
  for (int s = 0; s <= max_sum; ++s) {
    total += ways[m][s];
    if (std::abs(s - mean) >= distance) as_far += ways[m][s];
  }
  return std::min(1.0, as_far / total);
}

}  // namespace

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
  const bool exact = values.size() <= kExactMaxValues;
  double tie_term = 0;
  // Midranks times two (integers), in sorted order: only the exact p needs
  // them all.
  std::vector<int> doubled_ranks;
  int64_t doubled_rank_sum_a = 0;  // in int64: 100k latencies a side
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j].first == values[i].first) ++j;
    const int doubled = static_cast<int>(i + 1 + j);
    for (size_t k = i; k < j; ++k) {
      if (exact) doubled_ranks.push_back(doubled);
      if (values[k].second) doubled_rank_sum_a += doubled;
    }
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double n_a = static_cast<double>(a.size());
  const double n_b = static_cast<double>(b.size());
  MannWhitneyResult result;
  result.u = static_cast<double>(doubled_rank_sum_a) / 2 - n_a * (n_a + 1) / 2;
  const double mean = n_a * n_b / 2;
  const double variance = n_a * n_b / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) {  // every value ties: no evidence of a difference
    result.z = 0;
    result.p_value = 1;
    return result;
  }
  const double u_max = std::max(result.u, n_a * n_b - result.u);
  result.z = (u_max - mean - 0.5) / std::sqrt(variance);
  result.asymptotic_p_value =
      std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  result.p_value = result.asymptotic_p_value;
  if (exact) {
    // The smaller sample's rank sum: fewer subset sizes to count. The
    // distance from the mean is the same for either sample.
    const bool a_smaller = a.size() <= b.size();
    const int m = static_cast<int>(a_smaller ? a.size() : b.size());
    const int64_t total = static_cast<int64_t>(values.size());
    const int64_t observed = a_smaller
                                 ? doubled_rank_sum_a
                                 : total * (total + 1) - doubled_rank_sum_a;
    result.p_value = ExactRankSumP(doubled_ranks, m, observed);
    result.exact = true;
  }
  return result;
}

}  // namespace phaseloop::stats
