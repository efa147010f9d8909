#include "staging_harness/stats/speedup.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::stats {
namespace {

bool IsPositiveTime(double t) { return std::isfinite(t) && t > 0; }

// Median of `values`, reordering them.
double MedianInPlace(std::vector<double>& values) {
  const size_t n = values.size();
  const auto middle = values.begin() + n / 2;
  std::nth_element(values.begin(), middle, values.end());
  if (n % 2 == 1) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(values.begin(), middle);
  return lower + (upper - lower) / 2;
}

}  // namespace

absl::StatusOr<double> Median(std::vector<double> values) {
  if (values.empty()) {
    return absl::InvalidArgumentError("the median of no values is undefined");
  }
  return MedianInPlace(values);
}

absl::StatusOr<std::vector<double>> SpeedupRatios(
    absl::Span<const TimedPair> pairs) {
  std::vector<double> ratios;
  ratios.reserve(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!IsPositiveTime(pairs[i].baseline_s) ||
        !IsPositiveTime(pairs[i].candidate_s)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pair ", i, ": times must be positive numbers of seconds, got ",
          "baseline ", pairs[i].baseline_s, ", candidate ",
          pairs[i].candidate_s));
    }
    ratios.push_back(pairs[i].baseline_s / pairs[i].candidate_s);
  }
  return ratios;
}

absl::StatusOr<double> MedianSpeedup(absl::Span<const TimedPair> pairs) {
  auto ratios = SpeedupRatios(pairs);
  if (!ratios.ok()) return ratios.status();
  return Median(*std::move(ratios));
}

size_t MedianOrderStatistic(size_t n, double confidence, double* coverage) {
  // P(Binomial(n, 1/2) <= j), summed in log space (n may be in the
  // thousands; 2^-n underflows a double past 1074).
  const double alpha = (1 - confidence) / 2;
  double cdf = 0;
  size_t k = 0;
  double tail_below_k = 0;  // P(B <= k - 1) for the k found so far
  for (size_t j = 0; 2 * j < n; ++j) {
    const double log_pmf = std::lgamma(double(n) + 1) -
                           std::lgamma(double(j) + 1) -
                           std::lgamma(double(n - j) + 1) -
                           double(n) * std::log(2.0);
    cdf += std::exp(log_pmf);
    if (cdf > alpha) break;
    k = j + 1;  // P(B <= k - 1) = cdf <= alpha
    tail_below_k = cdf;
  }
  if (coverage != nullptr) {
    // k = 0: the range, whose miss probability is 2 P(B = 0).
    *coverage = k == 0 ? 1 - 2 * std::exp(-double(n) * std::log(2.0))
                       : 1 - 2 * tail_below_k;
  }
  return k;
}

absl::StatusOr<SpeedupInterval> MedianSpeedupInterval(
    absl::Span<const TimedPair> pairs, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence must be in (0, 1), got ", confidence));
  }
  auto ratios = SpeedupRatios(pairs);
  if (!ratios.ok()) return ratios.status();
  if (ratios->empty()) {
    return absl::InvalidArgumentError(
        "no timed pairs: a speedup needs at least one baseline/candidate "
        "pair");
  }
  SpeedupInterval interval;
  interval.pairs = ratios->size();
  interval.confidence = confidence;
  interval.median = *Median(*ratios);
  std::vector<double> sorted = *std::move(ratios);
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const size_t k =
      std::max<size_t>(1, MedianOrderStatistic(n, confidence,
                                               &interval.coverage));
  interval.low = sorted[k - 1];
  interval.high = sorted[n - k];
  return interval;
}

bool NarrowEnough(const SpeedupInterval& interval, double relative_half_width) {
  if (!(interval.median > 0) || interval.coverage < interval.confidence) {
    return false;
  }
  return interval.high / interval.median - 1 < relative_half_width &&
         1 - interval.low / interval.median < relative_half_width;
}

}  // namespace phaseloop::stats
