#ifndef PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_
#define PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_

// The speedup of a candidate over a baseline from interleaved timed runs
// (A B A B ...): the median of the per-pair ratios t_baseline / t_candidate
// (> 1: the candidate is faster), a percentile-bootstrap confidence
// interval of that median, and whether the interval is narrow enough to
// stop adding pairs. Pairing cancels drift that hits both runs of a pair
// (another job on the machine, frequency changes); the median resists the
// outliers a shared machine produces.
//
// Deterministic: the bootstrap draws from a seeded std::mt19937_64 (whose
// output the standard fixes) with its own unbiased index mapping, so the
// same pairs and seed give the same interval on any platform.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace phaseloop::stats {

// One interleaved pair of runs, in seconds (wall or CPU; both positive).
struct TimedPair {
  double baseline_s = 0;
  double candidate_s = 0;
};

struct BootstrapOptions {
  int resamples = 10000;
  double confidence = 0.95;  // in (0, 1)
  uint64_t seed = 1;
};

struct SpeedupInterval {
  double median = 0;  // median of t_baseline / t_candidate over the pairs
  double low = 0;     // bootstrap interval of the median
  double high = 0;
  size_t pairs = 0;
};

// The median (the mean of the middle two for an even count).
// InvalidArgument for no values.
absl::StatusOr<double> Median(std::vector<double> values);

// The q-quantile of sorted values, interpolating linearly between order
// statistics at (n - 1) q (numpy's default, Hyndman-Fan type 7). Requires a
// non-empty sorted vector and q in [0, 1].
double Quantile(const std::vector<double>& sorted, double q);

// The per-pair ratios t_baseline / t_candidate. InvalidArgument naming the
// pair for a time that is not a positive finite number.
absl::StatusOr<std::vector<double>> SpeedupRatios(
    absl::Span<const TimedPair> pairs);

// Median of SpeedupRatios(pairs). InvalidArgument for no pairs.
absl::StatusOr<double> MedianSpeedup(absl::Span<const TimedPair> pairs);

// MedianSpeedup with its percentile bootstrap interval: `resamples` times,
// draw as many pairs as there are with replacement and take their median
// ratio; the interval is the (1 - confidence) / 2 and (1 + confidence) / 2
// quantiles of those medians.
absl::StatusOr<SpeedupInterval> BootstrapSpeedup(
    absl::Span<const TimedPair> pairs, const BootstrapOptions& options = {});

// Whether both ends of the interval are within `relative_half_width` of the
// median (default ±1 %): the harness stops adding pairs once it holds.
// Stricter than (high - low) / 2: a lopsided interval must be narrow on
// both sides.
bool NarrowEnough(const SpeedupInterval& interval,
                  double relative_half_width = 0.01);

}  // namespace phaseloop::stats

#endif  // PHASELOOP_STAGING_HARNESS_STATS_SPEEDUP_H_
