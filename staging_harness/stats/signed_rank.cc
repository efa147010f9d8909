#include "staging_harness/stats/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "staging_harness/stats/percentile.h"

namespace phaseloop::stats {

absl::StatusOr<SignedRankResult> WilcoxonSignedRank(
    absl::Span<const double> differences) {
  if (differences.empty()) {
    return absl::InvalidArgumentError(
        "Wilcoxon signed-rank: no paired differences");
  }
  if (!AllFinite(differences)) {
    return absl::InvalidArgumentError(
        "Wilcoxon signed-rank: a paired difference is not finite");
  }
  std::vector<double> nonzero;
  for (double d : differences) {
    if (d != 0) nonzero.push_back(d);
  }
  SignedRankResult result;
  result.pairs = static_cast<int>(nonzero.size());
  if (nonzero.empty()) return result;
  std::sort(nonzero.begin(), nonzero.end(),
            [](double x, double y) { return std::abs(x) < std::abs(y); });
  // Midranks of the magnitudes, doubled to stay integers.
  const int n = result.pairs;
  std::vector<int> doubled_ranks(n);
  int64_t doubled_w_plus = 0;  // int64: sums of ranks of many pairs
  double tie_term = 0;  // sum of t^3 - t over groups of t tied magnitudes
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && std::abs(nonzero[j]) == std::abs(nonzero[i])) ++j;
    for (int k = i; k < j; ++k) {
      doubled_ranks[k] = i + 1 + j;
      if (nonzero[k] > 0) doubled_w_plus += i + 1 + j;
    }
    const double t = j - i;
    tie_term += t * t * t - t;
    i = j;
  }
  result.w_plus = doubled_w_plus / 2.0;
  const int64_t doubled_total = int64_t{n} * (n + 1);  // all doubled ranks
  if (static_cast<size_t>(n) <= kExactMaxPairs) {
    // ways[s]: sign assignments whose positive doubled ranks sum to s.
    std::vector<double> ways(doubled_total + 1, 0);
    ways[0] = 1;
    int reach = 0;
    for (int r : doubled_ranks) {
      for (int s = reach; s >= 0; --s) {
        if (ways[s] != 0) ways[s + r] += ways[s];
      }
      reach += r;
    }
    // Distances from the mean doubled_total / 2, doubled again to stay
    // integers.
    const int64_t distance = std::abs(2 * doubled_w_plus - doubled_total);
    double all = 0;
    double as_far = 0;
    for (int64_t s = 0; s <= doubled_total; ++s) {
      all += ways[s];
      if (std::abs(2 * s - doubled_total) >= distance) as_far += ways[s];
    }
    result.p_value = std::min(1.0, as_far / all);
    result.exact = true;
    return result;
  }
  const double pairs = n;
  const double mean = pairs * (pairs + 1) / 4;
  const double variance =
      pairs * (pairs + 1) * (2 * pairs + 1) / 24 - tie_term / 48;
  const double z =
      std::max(0.0, std::abs(result.w_plus - mean) - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

}  // namespace phaseloop::stats
