#include "reward_engine/sli/latency_sketch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace phaseloop::sli {
namespace {

// Relative slack when checking exact statistics against bucket bounds, for
// the rounding of the bounds themselves.
constexpr double kBoundSlack = 1e-9;
// AddChecked's index for the zero bucket (no mapping index is this low).
constexpr int kZeroIndex = std::numeric_limits<int>::min();

// FromProto's bucket checks, in order, naming the first offending field:
// indexes within the mapping, sparse indexes increasing, counts
// non-negative, total without overflow. Sets the total count and the lowest
// and highest occupied indexes (hi < lo: none).
absl::Status CheckBuckets(const v1::LatencySketch& proto,
                          const LogMapping& mapping, bool dense, int size,
                          double accuracy, int64_t* total_out, int64_t* lo_out,
                          int64_t* hi_out) {
  const bool sparse = !dense;
  int64_t total = *total_out;
  int64_t lo = 0;
  int64_t hi = -1;
  const char* index_field = dense ? "index_offset" : "sparse_indexes";
  const char* count_field = dense ? "counts" : "sparse_counts";
  for (int k = 0; k < size; ++k) {
    const int64_t index = dense ? int64_t{proto.index_offset()} + k
                                : int64_t{proto.sparse_indexes(k)};
    const int64_t count = dense ? proto.counts(k) : proto.sparse_counts(k);
    if (index < mapping.min_index() || index > mapping.max_index()) {
      return absl::InvalidArgumentError(absl::StrCat(
          index_field, dense ? "" : absl::StrCat("[", k, "]"),
          ": bucket index ", index, " is outside [", mapping.min_index(), ", ",
          mapping.max_index(), "], the buckets of [", kMinValue, ", ",
          kMaxValue, "] s at relative accuracy ", accuracy));
    }
    if (sparse && k > 0 && index <= proto.sparse_indexes(k - 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sparse_indexes[", k, "]: index ", index,
                       " is not greater than the previous one (",
                       proto.sparse_indexes(k - 1), ")"));
    }
    if (count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(count_field, "[", k, "]: negative count ", count));
    }
    if (count > kMaxTotalCount - total) {
      return absl::InvalidArgumentError(
          absl::StrCat(count_field, "[", k, "]: the total count exceeds 2^62"));
    }
    total += count;
    if (count == 0) continue;
    if (hi < lo) lo = index;
    hi = index;
  }
  *total_out = total;
  *lo_out = lo;
  *hi_out = hi;
  return absl::OkStatus();
}

}  // namespace

LogMapping::LogMapping(double relative_accuracy)
    : relative_accuracy_(relative_accuracy),
      gamma_((1 + relative_accuracy) / (1 - relative_accuracy)),
      log_gamma_(std::log(gamma_)),
      inverse_log_gamma_(1 / log_gamma_),
      min_index_(Index(kMinValue)),
      max_index_(Index(kMaxValue)) {}

int LogMapping::Index(double value) const {
  return static_cast<int>(std::ceil(std::log(value) * inverse_log_gamma_));
}

double LogMapping::Value(int index) const {
  return 2 * std::exp(index * log_gamma_) / (gamma_ + 1);
}

double LogMapping::LowerBound(int index) const {
  return std::exp((index - 1) * log_gamma_);
}

double LogMapping::UpperBound(int index) const {
  return std::exp(index * log_gamma_);
}

LatencySketch::LatencySketch()
    : LatencySketch(kDefaultRelativeAccuracy, kDefaultMaxBuckets) {}

LatencySketch::LatencySketch(double relative_accuracy, int max_buckets)
    : mapping_(relative_accuracy), max_buckets_(max_buckets) {}

absl::StatusOr<LatencySketch> LatencySketch::Create(double relative_accuracy,
                                                    int max_buckets) {
  if (!(relative_accuracy >= kMinRelativeAccuracy &&
        relative_accuracy <= kMaxRelativeAccuracy)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relative_accuracy ", relative_accuracy, " is outside [",
                     kMinRelativeAccuracy, ", ", kMaxRelativeAccuracy, "]"));
  }
  if (max_buckets < kMinBuckets || max_buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("max_buckets ", max_buckets,
                                                   " is outside [", kMinBuckets,
                                                   ", ", kMaxBuckets, "]"));
  }
  return LatencySketch(relative_accuracy, max_buckets);
}

int LatencySketch::Reserve(int lo, int hi) {
  const int cur_lo = offset_;
  const int cur_hi = offset_ + static_cast<int>(counts_.size()) - 1;
  int new_lo = counts_.empty() ? lo : std::min(lo, cur_lo);
  const int new_hi = counts_.empty() ? hi : std::max(hi, cur_hi);
  if (new_hi - new_lo + 1 > max_buckets_) {
    new_lo = new_hi - max_buckets_ + 1;
    collapsed_ = true;
  }
  if (!counts_.empty() && new_lo == cur_lo && new_hi == cur_hi) return new_lo;
  std::vector<int64_t> grown(new_hi - new_lo + 1, 0);
  for (size_t k = 0; k < counts_.size(); ++k) {
    const int index = std::max(cur_lo + static_cast<int>(k), new_lo);
    grown[index - new_lo] += counts_[k];
  }
  counts_ = std::move(grown);
  offset_ = new_lo;
  return new_lo;
}

absl::Status LatencySketch::Add(double value, int64_t count) {
  if (!(value >= 0 && value <= kMaxValue)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "latency ", value, " s is not a number in [0, ", kMaxValue, "]"));
  }
  return AddChecked(value < kMinValue ? kZeroIndex : mapping_.Index(value),
                    value, count);
}

absl::Status LatencySketch::AddToBucket(int index, int64_t count) {
  if (index < mapping_.min_index() || index > mapping_.max_index()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bucket index ", index, " is outside [",
                     mapping_.min_index(), ", ", mapping_.max_index(), "]"));
  }
  return AddChecked(index, mapping_.Value(index), count);
}

absl::Status LatencySketch::AddChecked(int index, double value, int64_t count) {
  if (count <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("count ", count, " is not positive"));
  }
  if (count > kMaxTotalCount - stats_.count) {
    return absl::OutOfRangeError("sketch count would exceed 2^62");
  }
  if (index == kZeroIndex) {
    zero_count_ += count;
  } else {
    const int lo = Reserve(index, index);
    counts_[std::max(index, lo) - offset_] += count;
  }
  if (stats_.count == 0) {
    stats_.min = stats_.max = value;
  } else {
    stats_.min = std::min(stats_.min, value);
    stats_.max = std::max(stats_.max, value);
  }
  stats_.count += count;
  stats_.sum += value * static_cast<double>(count);
  return absl::OkStatus();
}

absl::Status LatencySketch::Merge(const LatencySketch& other) {
  if (other.relative_accuracy() != relative_accuracy()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot merge sketches of different relative accuracy (",
        relative_accuracy(), " and ", other.relative_accuracy(), ")"));
  }
  if (other.empty()) return absl::OkStatus();
  if (other.count() > kMaxTotalCount - stats_.count) {
    return absl::OutOfRangeError("merged sketch count would exceed 2^62");
  }
  if (!other.counts_.empty()) {
    const int other_hi =
        other.offset_ + static_cast<int>(other.counts_.size()) - 1;
    const int lo = Reserve(other.offset_, other_hi);
    if (lo <= other.offset_) {
      // Nothing to fold: a plain element-wise add (the engine's hot path).
      int64_t* into = counts_.data() + (other.offset_ - offset_);
      const int64_t* from = other.counts_.data();
      for (size_t k = 0; k < other.counts_.size(); ++k) into[k] += from[k];
    } else {
      for (size_t k = 0; k < other.counts_.size(); ++k) {
        if (other.counts_[k] == 0) continue;
        const int index = std::max(other.offset_ + static_cast<int>(k), lo);
        counts_[index - offset_] += other.counts_[k];
      }
    }
  }
  collapsed_ = collapsed_ || other.collapsed_;
  zero_count_ += other.zero_count_;
  if (stats_.count == 0) {
    stats_.min = other.stats_.min;
    stats_.max = other.stats_.max;
  } else {
    stats_.min = std::min(stats_.min, other.stats_.min);
    stats_.max = std::max(stats_.max, other.stats_.max);
  }
  stats_.count += other.stats_.count;
  stats_.sum += other.stats_.sum;
  return absl::OkStatus();
}

absl::StatusOr<double> LatencySketch::Quantile(double q) const {
  if (!(q >= 0 && q <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantile ", q, " is outside [0, 1]"));
  }
  if (empty()) {
    return absl::FailedPreconditionError("quantile of an empty sketch");
  }
  const double rank = q * static_cast<double>(stats_.count - 1);
  // The extreme ranks are known exactly.
  if (rank < 1) return stats_.min;
  if (rank >= static_cast<double>(stats_.count - 1)) return stats_.max;
  int64_t cumulative = zero_count_;
  if (static_cast<double>(cumulative) > rank) return stats_.min;
  for (size_t k = 0; k < counts_.size(); ++k) {
    cumulative += counts_[k];
    if (static_cast<double>(cumulative) > rank) {
      const double estimate = mapping_.Value(offset_ + static_cast<int>(k));
      return std::clamp(estimate, stats_.min, stats_.max);
    }
  }
  return stats_.max;
}

absl::StatusOr<double> LatencySketch::InterpolatedQuantile(double q) const {
  absl::StatusOr<double> plain = Quantile(q);
  if (!plain.ok()) return plain;
  const double rank = q * static_cast<double>(stats_.count - 1);
  if (rank < 1 || rank >= static_cast<double>(stats_.count - 1)) return plain;
  int64_t cumulative = zero_count_;
  if (static_cast<double>(cumulative) > rank) return plain;
  for (size_t k = 0; k < counts_.size(); ++k) {
    const int64_t in_bucket = counts_[k];
    if (static_cast<double>(cumulative + in_bucket) > rank) {
      const int index = offset_ + static_cast<int>(k);
      // Value j (0-based) of the bucket's n sits at fraction (j + 0.5) / n
      // of the bucket in log(value). A fractional rank past the last value
      // would reach beyond the bucket (up to half of it again, past the
      // documented error): clamped to the bucket.
      const double fraction =
          std::min(1.0, (rank - static_cast<double>(cumulative) + 0.5) /
                            static_cast<double>(in_bucket));
      const double lower = mapping_.LowerBound(index);
      const double estimate =
          lower * std::pow(mapping_.UpperBound(index) / lower, fraction);
      return std::clamp(estimate, stats_.min, stats_.max);
    }
    cumulative += in_bucket;
  }
  return plain;
}

int64_t LatencySketch::CountAtOrBelow(double threshold) const {
  if (empty() || !(threshold >= stats_.min)) return 0;
  if (threshold >= stats_.max) return stats_.count;
  int64_t below = zero_count_;
  if (threshold < kMinValue || counts_.empty()) return below;
  const int held = mapping_.Index(threshold);
  const int top = offset_ + static_cast<int>(counts_.size()) - 1;
  for (int index = offset_; index <= std::min(held - 1, top); ++index) {
    below += counts_[index - offset_];
  }
  if (held > top || held < offset_) return below;
  // The threshold's own bucket, split.
  const int64_t in_bucket = counts_[held - offset_];
  if (in_bucket == 0) return below;
  const double lower = mapping_.LowerBound(held);
  const double fraction = std::clamp(
      std::log(threshold / lower) / std::log(mapping_.UpperBound(held) / lower),
      0.0, 1.0);
  return below + static_cast<int64_t>(
                     std::llround(fraction * static_cast<double>(in_bucket)));
}

int64_t LatencySketch::BucketCount(int index) const {
  if (index < offset_ || index >= offset_ + static_cast<int>(counts_.size())) {
    return 0;
  }
  return counts_[index - offset_];
}

v1::LatencySketch LatencySketch::ToProto() const {
  v1::LatencySketch proto;
  proto.set_relative_accuracy(relative_accuracy());
  proto.set_zero_count(zero_count_);
  size_t first = 0;
  size_t last = counts_.size();
  while (first < last && counts_[first] == 0) ++first;
  while (last > first && counts_[last - 1] == 0) --last;
  if (first == last) return proto;
  const size_t nonzero = static_cast<size_t>(
      std::count_if(counts_.begin() + first, counts_.begin() + last,
                    [](int64_t c) { return c != 0; }));
  // A dense zero costs one byte; a sparse entry costs its index (~2 bytes)
  // on top of the count both forms pay.
  if (2 * nonzero < (last - first) - nonzero) {
    for (size_t k = first; k < last; ++k) {
      if (counts_[k] == 0) continue;
      proto.add_sparse_indexes(offset_ + static_cast<int>(k));
      proto.add_sparse_counts(counts_[k]);
    }
  } else {
    proto.set_index_offset(offset_ + static_cast<int>(first));
    for (size_t k = first; k < last; ++k) proto.add_counts(counts_[k]);
  }
  return proto;
}

absl::StatusOr<LatencySketch> LatencySketch::FromProto(
    const v1::LatencySketch& proto, int max_buckets) {
  const double accuracy = proto.relative_accuracy();
  if (!(accuracy >= kMinRelativeAccuracy && accuracy <= kMaxRelativeAccuracy)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relative_accuracy: ", accuracy, " is outside [",
                     kMinRelativeAccuracy, ", ", kMaxRelativeAccuracy, "]"));
  }
  absl::StatusOr<LatencySketch> created = Create(accuracy, max_buckets);
  if (!created.ok()) return created.status();
  LatencySketch sketch = *std::move(created);
  const LogMapping& mapping = sketch.mapping_;
  if (proto.zero_count() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("zero_count: negative count ", proto.zero_count()));
  }
  const bool dense = proto.counts_size() > 0;
  const bool sparse =
      proto.sparse_indexes_size() > 0 || proto.sparse_counts_size() > 0;
  if (dense && sparse) {
    return absl::InvalidArgumentError(
        "counts, sparse_indexes: both the dense and the sparse form are set");
  }
  const int size = dense ? proto.counts_size() : proto.sparse_indexes_size();
  if (size > kMaxBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat(dense ? "counts" : "sparse_indexes", ": ", size,
                     " buckets, more than ", kMaxBuckets));
  }
  if (sparse && proto.sparse_counts_size() != proto.sparse_indexes_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sparse_counts: ", proto.sparse_counts_size(), " counts for ",
        proto.sparse_indexes_size(), " sparse_indexes"));
  }
  // Validate everything before storing anything; messages are built only on
  // failure (this runs for every bucket the reward engine decodes).
  int64_t total = proto.zero_count();
  int64_t lo = 0;
  int64_t hi = -1;
  bool valid = false;
  if (dense) {
    // Fast path: the index range checked once, then only the counts. Any
    // error falls through to the general loop, which names the first one.
    const int64_t first = proto.index_offset();
    if (first >= mapping.min_index() &&
        first + size - 1 <= mapping.max_index()) {
      const int64_t* counts = proto.counts().data();
      int k = 0;
      for (; k < size; ++k) {
        const int64_t count = counts[k];
        if (count < 0 || count > kMaxTotalCount - total) break;
        total += count;
        if (count == 0) continue;
        if (hi < lo) lo = first + k;
        hi = first + k;
      }
      valid = k == size;
    }
  }
  if (!valid) {
    total = proto.zero_count();
    lo = 0;
    hi = -1;
    absl::Status checked =
        CheckBuckets(proto, mapping, dense, size, accuracy, &total, &lo, &hi);
    if (!checked.ok()) return checked;
  }
  sketch.zero_count_ = proto.zero_count();
  if (hi >= lo) {
    if (dense && hi - lo + 1 <= max_buckets) {
      // Nothing to collapse: the occupied range, copied as it is.
      const int64_t* counts =
          proto.counts().data() + (lo - proto.index_offset());
      sketch.counts_.assign(counts, counts + (hi - lo + 1));
      sketch.offset_ = static_cast<int>(lo);
    } else {
      const int first =
          sketch.Reserve(static_cast<int>(lo), static_cast<int>(hi));
      for (int k = 0; k < size; ++k) {
        const int index =
            dense ? proto.index_offset() + k : proto.sparse_indexes(k);
        const int64_t count = dense ? proto.counts(k) : proto.sparse_counts(k);
        if (count != 0) {
          sketch.counts_[std::max(index, first) - sketch.offset_] += count;
        }
      }
    }
  }
  // Estimated statistics: the representatives of the buckets (sum) and of
  // the extreme buckets (min, max). The representatives grow by gamma from
  // bucket to bucket: one exp, not one per bucket (the relative rounding,
  // ~1e-13 over 2048 buckets, is far inside the sketch's accuracy).
  SketchStats& stats = sketch.stats_;
  stats.count = total;
  if (!sketch.counts_.empty()) {
    double representative = mapping.Value(sketch.offset_);
    double sum = 0;
    for (size_t k = 0; k < sketch.counts_.size(); ++k) {
      sum += static_cast<double>(sketch.counts_[k]) * representative;
      representative *= mapping.gamma();
    }
    stats.sum = sum;
  }
  if (sketch.zero_count_ == 0 && hi >= lo) {
    stats.min = mapping.Value(sketch.offset_);
  }
  if (hi >= lo) stats.max = mapping.Value(static_cast<int>(hi));
  return sketch;
}

absl::Status LatencySketch::SetExactStats(const SketchStats& exact) {
  if (exact.count != stats_.count) {
    return absl::InvalidArgumentError(absl::StrCat("count: ", exact.count,
                                                   ", but the sketch holds ",
                                                   stats_.count, " values"));
  }
  for (auto [name, value] : {std::pair{"sum_seconds", exact.sum},
                             std::pair{"min_seconds", exact.min},
                             std::pair{"max_seconds", exact.max}}) {
    if (!std::isfinite(value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": ", value, " is not a finite, non-negative latency"));
    }
    if (exact.count == 0 && value != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", value, ", but count is 0 (must be 0)"));
    }
  }
  if (exact.count == 0) {
    stats_ = exact;
    return absl::OkStatus();
  }
  if (exact.min > exact.max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_seconds: ", exact.min, " is above max_seconds ", exact.max));
  }
  // The lowest and highest occupied buckets.
  int lo = 0;
  int hi = -1;
  size_t first = 0;
  size_t last = counts_.size();
  while (first < last && counts_[first] == 0) ++first;
  while (last > first && counts_[last - 1] == 0) --last;
  if (first < last) {
    lo = offset_ + static_cast<int>(first);
    hi = offset_ + static_cast<int>(last) - 1;
  }
  const double up = 1 + kBoundSlack;
  const double down = 1 - kBoundSlack;
  // The lowest bucket may hold collapsed values below its range, so min is
  // only bounded above by it.
  const double min_ceiling =
      zero_count_ > 0 ? kMinValue : mapping_.UpperBound(lo) * up;
  const double min_floor = zero_count_ > 0 ? 0 : kMinValue * down;
  if (exact.min > min_ceiling || exact.min < min_floor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_seconds: ", exact.min, " is not in the sketch's lowest bucket [",
        min_floor, ", ", min_ceiling, "]"));
  }
  const double max_floor = hi < lo ? 0 : mapping_.LowerBound(hi) * down;
  const double max_ceiling = hi < lo ? kMinValue : mapping_.UpperBound(hi) * up;
  if (exact.max > max_ceiling || exact.max < max_floor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seconds: ", exact.max, " is not in the sketch's highest bucket [",
        max_floor, ", ", max_ceiling, "]"));
  }
  const double n = static_cast<double>(exact.count);
  if (exact.sum < exact.min * n * down || exact.sum > exact.max * n * up) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sum_seconds: ", exact.sum, " is not between count * min_seconds (",
        exact.min * n, ") and count * max_seconds (", exact.max * n, ")"));
  }
  stats_ = exact;
  return absl::OkStatus();
}

}  // namespace phaseloop::sli
