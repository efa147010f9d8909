#include "staging_harness/stats/speedup.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::stats {
namespace {

bool IsPositiveTime(double t) { return std::isfinite(t) && t > 0; }

// A uniform index in [0, n) from the generator, by rejection (unbiased, and
// unlike std::uniform_int_distribution the same on every standard library).
size_t DrawIndex(std::mt19937_64& rng, size_t n) {
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t limit =
      std::mt19937_64::max() - (std::mt19937_64::max() % range + 1) % range;
  uint64_t draw = rng();
  while (draw > limit) draw = rng();
  return static_cast<size_t>(draw % range);
}

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

double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  if (below + 1 >= sorted.size()) return sorted.back();
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
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

absl::StatusOr<SpeedupInterval> BootstrapSpeedup(
    absl::Span<const TimedPair> pairs, const BootstrapOptions& options) {
  if (options.resamples < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bootstrap resamples must be >= 1, got ", options.resamples));
  }
  if (!(options.confidence > 0 && options.confidence < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence must be in (0, 1), got ", options.confidence));
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
  interval.median = *Median(*ratios);

  std::mt19937_64 rng(options.seed);
  std::vector<double> medians;
  medians.reserve(options.resamples);
  std::vector<double> resample(ratios->size());
  for (int r = 0; r < options.resamples; ++r) {
    for (double& value : resample)
      value = (*ratios)[DrawIndex(rng, ratios->size())];
    medians.push_back(MedianInPlace(resample));
  }
  std::sort(medians.begin(), medians.end());
  interval.low = Quantile(medians, (1 - options.confidence) / 2);
  interval.high = Quantile(medians, (1 + options.confidence) / 2);
  return interval;
}

bool NarrowEnough(const SpeedupInterval& interval, double relative_half_width) {
  if (!(interval.median > 0)) return false;
  return interval.high / interval.median - 1 < relative_half_width &&
         1 - interval.low / interval.median < relative_half_width;
}

}  // namespace phaseloop::stats
