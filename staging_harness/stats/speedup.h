#ifndef PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_
#define PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_

// The speedup of a candidate over a baseline from interleaved timed runs
// (A B A B ...): the median of the per-pair ratios t_baseline / t_candidate
// (> 1: the candidate is faster), a distribution-free confidence interval
// of that median, and whether the interval is narrow enough to stop adding
// pairs. Pairing cancels drift that hits both runs of a pair (another job
// on the machine, frequency changes); the median resists the outliers a
// shared machine produces.
//
// Why order statistics and not a bootstrap: the percentile bootstrap of a
// median under-covers at the 10-40 pairs a staging takes (its resampled
// medians take only a few distinct values), and a harness that stops once
// the interval looks narrow picks the samples whose spread happened to be
// small. Simulated with the harness's stopping rule (1-2 % noise per
// ratio, 2000 runs per row; BENCHMARKS.md "Staging"), a 95 % bootstrap
// interval held 1 in 85-92 % of A/A runs; the exact order-statistic
// interval at 95 % in 90-94 %; at 99 % in 92-99 %. The interval is a pure
// function of the pairs: no seed, the same bytes on any platform.

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace phaseloop::stats {

// One interleaved pair of runs, in seconds (wall or CPU; both positive).
struct TimedPair {
  double baseline_s = 0;
  double candidate_s = 0;
};

struct SpeedupInterval {
  double median = 0;  // median of t_baseline / t_candidate over the pairs
  double low = 0;     // confidence interval of the median
  double high = 0;
  size_t pairs = 0;
  double confidence = 0;  // asked for
  // What the interval's order statistics guarantee for independent ratios
  // from any continuous distribution (>= confidence once there are enough
  // pairs; below it, with the sample's range as the interval, before).
  double coverage = 0;
};

// The median (the mean of the middle two for an even count).
// InvalidArgument for no values.
absl::StatusOr<double> Median(std::vector<double> values);

// The per-pair ratios t_baseline / t_candidate. InvalidArgument naming the
// pair for a time that is not a positive finite number.
absl::StatusOr<std::vector<double>> SpeedupRatios(
    absl::Span<const TimedPair> pairs);

// Median of SpeedupRatios(pairs). InvalidArgument for no pairs.
absl::StatusOr<double> MedianSpeedup(absl::Span<const TimedPair> pairs);

// The smallest k (1-based) such that the order statistics x(k), x(n+1-k)
// of n sorted values bound their population median with probability at
// least `confidence`: 1 - 2 P(Binomial(n, 1/2) <= k - 1) >= confidence,
// taking the largest such k. 0 when even the range (k = 1) falls short:
// n < log2(2 / (1 - confidence)), e.g. fewer than 8 values at 99 %.
// Sets `coverage` to 1 - 2 P(Binomial(n, 1/2) <= k - 1) (k = 1 when 0).
size_t MedianOrderStatistic(size_t n, double confidence, double* coverage);

// MedianSpeedup with its distribution-free interval: the ratios' order
// statistics x(k) and x(n+1-k), k from MedianOrderStatistic (the sample's
// range while there are too few pairs for the confidence; `coverage` then
// says what it is worth). InvalidArgument for no pairs, a bad time or a
// confidence outside (0, 1).
absl::StatusOr<SpeedupInterval> MedianSpeedupInterval(
    absl::Span<const TimedPair> pairs, double confidence = 0.99);

// Whether the interval reaches its confidence and both ends are within
// `relative_half_width` of the median (default ±1 %): the harness stops
// adding pairs once it holds. Stricter than (high - low) / 2: a lopsided
// interval must be narrow on both sides.
bool NarrowEnough(const SpeedupInterval& interval,
                  double relative_half_width = 0.01);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_
