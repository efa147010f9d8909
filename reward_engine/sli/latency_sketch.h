#ifndef PHASELOOP_REWARD_ENGINE_SLI_LATENCY_SKETCH_H_
#define PHASELOOP_REWARD_ENGINE_SLI_LATENCY_SKETCH_H_

// A mergeable latency sketch with relative-error quantiles (DDSketch,
// Masson et al., VLDB 2019), the in-memory form of v1::LatencySketch.
//
// Values are latencies in seconds. With relative accuracy a and
// gamma = (1 + a) / (1 - a), a value x in [kMinValue, kMaxValue] goes to
// bucket i = ceil(log_gamma(x)), which holds (gamma^(i-1), gamma^i]; the
// bucket's representative 2 gamma^i / (gamma + 1) is within a relative error
// a of every value in it. Values in [0, kMinValue) are counted in a zero
// bucket; negative, NaN, infinite and larger-than-kMaxValue values are
// rejected.
//
// Guarantee. Quantile(q) returns an estimate of the value of rank
// floor(q * (count - 1)) (0-based) in the sorted multiset of added values,
// within a relative error a (default 0.5 %, so inside the 1 % budget of the
// design card) provided that
//   - that value is >= kMinValue (below it, the estimate is the exact minimum
//     and the absolute error is < kMinValue), and
//   - that value lies above the collapsed range, if any: memory is bounded by
//     `max_buckets` counters; when the values span more buckets, the lowest
//     buckets are folded into the lowest kept one (collapsed() is then true),
//     so only low quantiles lose their guarantee. With the defaults
//     (a = 0.005, 2048 buckets) no collapsing happens while max/min of the
//     non-zero values stays below gamma^2047, about 7.8e8 (1 us to 13 min).
// The ranks of the minimum and maximum return the exact min and max, and
// other estimates are clamped to [min, max]. The guarantee holds
// after any sequence of Add and Merge: merging is exact (counts of equal
// indexes add), so a merged sketch equals the sketch of the concatenated data
// (bucket for bucket; sums up to floating-point rounding), in any order.
//
// Thread-safety: none; a const sketch may be read from several threads.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "phaseloop/v1/sli.pb.h"

namespace phaseloop::sli {

inline constexpr double kDefaultRelativeAccuracy = 0.005;
inline constexpr double kMinRelativeAccuracy = 0.001;
inline constexpr double kMaxRelativeAccuracy = 0.1;
// Values below kMinValue seconds (1 ns) count as zero; above kMaxValue
// (about 31 years) they are rejected as nonsense.
inline constexpr double kMinValue = 1e-9;
inline constexpr double kMaxValue = 1e9;
inline constexpr int kDefaultMaxBuckets = 2048;
inline constexpr int kMinBuckets = 16;
inline constexpr int kMaxBuckets = 1 << 16;
// Total counts are bounded so that sums of counts never overflow.
inline constexpr int64_t kMaxTotalCount = int64_t{1} << 62;

// The value <-> bucket index mapping for one relative accuracy.
class LogMapping {
 public:
  // `relative_accuracy` must be within [kMinRelativeAccuracy,
  // kMaxRelativeAccuracy] (checked by LatencySketch::Create).
  explicit LogMapping(double relative_accuracy);

  double relative_accuracy() const { return relative_accuracy_; }
  double gamma() const { return gamma_; }
  // Bucket of `value`, which must be within [kMinValue, kMaxValue].
  int Index(double value) const;
  // The representative value of bucket `index` and its bounds.
  double Value(int index) const;
  double LowerBound(int index) const;  // exclusive
  double UpperBound(int index) const;  // inclusive
  // Indexes of kMinValue and kMaxValue: every valid index is between them.
  int min_index() const { return min_index_; }
  int max_index() const { return max_index_; }

 private:
  double relative_accuracy_;
  double gamma_;
  double log_gamma_;
  double inverse_log_gamma_;
  int min_index_;
  int max_index_;
};

// Exact statistics of the values in a sketch. They travel beside the sketch
// (SliWindow.count, sum_seconds, min_seconds, max_seconds).
struct SketchStats {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

class LatencySketch {
 public:
  // Relative accuracy kDefaultRelativeAccuracy, kDefaultMaxBuckets buckets.
  LatencySketch();
  static absl::StatusOr<LatencySketch> Create(
      double relative_accuracy, int max_buckets = kDefaultMaxBuckets);

  // Adds `count` (> 0) occurrences of `value` seconds. InvalidArgument for a
  // value outside [0, kMaxValue] or NaN, OutOfRange when the total count
  // would exceed kMaxTotalCount; the sketch is unchanged on error.
  absl::Status Add(double value, int64_t count = 1);
  // Adds `count` (> 0) values known to be in bucket `index` (for stores that
  // compute indexes themselves, e.g. the recorder). The exact statistics are
  // updated with the bucket's representative value.
  absl::Status AddToBucket(int index, int64_t count);
  // Adds every value of `other`. FailedPrecondition when the relative
  // accuracies differ; OutOfRange on count overflow; unchanged on error.
  absl::Status Merge(const LatencySketch& other);

  // See the guarantee above. InvalidArgument unless 0 <= q <= 1;
  // FailedPrecondition on an empty sketch.
  absl::StatusOr<double> Quantile(double q) const;

  // Quantile(q) refined inside its bucket: the bucket's values are taken
  // as spread evenly in log(value) over (gamma^(i-1), gamma^i], and the
  // estimate is where rank q * (count - 1) falls among them. The worst-case
  // relative error is gamma - 1 (about 2a, the whole bucket) instead of a,
  // but the estimate moves continuously with the data instead of in steps
  // of log(gamma): for a distribution smooth over one bucket, a 0.5 % shift
  // of every value moves it by 0.5 %, where Quantile would stay put or jump
  // by a whole bucket. For comparing two groups (relative rewards), not for
  // absolute figures. Errors as Quantile.
  absl::StatusOr<double> InterpolatedQuantile(double q) const;

  // How many values are <= `threshold` seconds. Exact for every value
  // outside the bucket holding `threshold`; that bucket's count is split in
  // proportion to where `threshold` lies in it in log(value) (the values
  // taken as spread evenly in log over the bucket), rounded to nearest. So
  // the answer is between the exact counts at threshold / gamma and
  // threshold * gamma, the misclassified values are all within a relative
  // 2a of the threshold, and for a distribution smooth over that bucket the
  // error is a small fraction of its count (counting the whole bucket as at
  // or below, as before, under-counted the values above the threshold by up
  // to the whole bucket, 1-2 % of requests near a p95 threshold). Exact at
  // the extremes: 0 below min(), count() at or above max(). A negative or
  // NaN threshold counts nothing.
  int64_t CountAtOrBelow(double threshold) const;

  int64_t count() const { return stats_.count; }
  double sum() const { return stats_.sum; }
  double min() const { return stats_.min; }
  double max() const { return stats_.max; }
  const SketchStats& stats() const { return stats_; }
  bool empty() const { return stats_.count == 0; }
  double relative_accuracy() const { return mapping_.relative_accuracy(); }
  const LogMapping& mapping() const { return mapping_; }
  int max_buckets() const { return max_buckets_; }
  // Whether the lowest buckets were folded to bound memory.
  bool collapsed() const { return collapsed_; }
  int64_t zero_count() const { return zero_count_; }
  // Count of bucket `index` (0 outside the stored range).
  int64_t BucketCount(int index) const;

  // The distribution, in the smaller of the dense and sparse forms. The
  // exact statistics are not part of it (see SketchStats).
  v1::LatencySketch ToProto() const;
  // Rebuilds a sketch from `proto`, rejecting malformed input with
  // InvalidArgument naming the field: relative accuracy out of range, both
  // or mismatched dense/sparse forms, negative counts, indexes outside the
  // mapping's range, sparse indexes not increasing, total count overflow.
  // Buckets beyond `max_buckets` are collapsed. The statistics are estimated
  // from the buckets (within the relative accuracy unless collapsed) until
  // SetExactStats replaces them.
  static absl::StatusOr<LatencySketch> FromProto(
      const v1::LatencySketch& proto, int max_buckets = kDefaultMaxBuckets);
  // Replaces the statistics by the exact ones that travelled beside the
  // distribution. InvalidArgument, naming the SliWindow field (count,
  // sum_seconds, min_seconds, max_seconds), when they cannot be those of the
  // distribution: another count, min or max outside the lowest or highest
  // occupied bucket, sum outside [count * min, count * max], or non-finite.
  absl::Status SetExactStats(const SketchStats& exact);

 private:
  LatencySketch(double relative_accuracy, int max_buckets);
  // Grows the stored range to cover [lo, hi], collapsing the lowest buckets
  // beyond max_buckets_; returns the lowest stored index afterwards.
  int Reserve(int lo, int hi);
  // Adds `count` values `value` to bucket `index` (or the zero bucket).
  absl::Status AddChecked(int index, double value, int64_t count);

  LogMapping mapping_;
  int max_buckets_;
  bool collapsed_ = false;
  int64_t zero_count_ = 0;
  int offset_ = 0;               // index of counts_[0]
  std::vector<int64_t> counts_;  // empty, or the range [offset_, offset_+size)
  SketchStats stats_;
};

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_LATENCY_SKETCH_H_
