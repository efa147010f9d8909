#include "reward_engine/sli/latency_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace phaseloop::sli {
namespace {

// Exact value of the rank the sketch estimates: floor(q * (n - 1)).
double ExactQuantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q *
                                    static_cast<double>(values.size() - 1))];
}

LatencySketch SketchOf(const std::vector<double>& values,
                       int max_buckets = kDefaultMaxBuckets) {
  auto sketch = LatencySketch::Create(kDefaultRelativeAccuracy, max_buckets);
  EXPECT_TRUE(sketch.ok());
  for (double v : values) EXPECT_TRUE(sketch->Add(v).ok()) << v;
  return *sketch;
}

struct Distribution {
  std::string name;
  std::function<double(std::mt19937_64&)> draw;  // seconds
};

std::vector<Distribution> Distributions() {
  return {
      {"uniform_1ms_100ms",
       [](std::mt19937_64& rng) {
         return std::uniform_real_distribution<double>(0.001, 0.1)(rng);
       }},
      {"lognormal_20ms",
       [](std::mt19937_64& rng) {
         return std::lognormal_distribution<double>(std::log(0.02), 0.6)(rng);
       }},
      {"bimodal_5ms_200ms",
       [](std::mt19937_64& rng) {
         const bool slow = std::bernoulli_distribution(0.08)(rng);
         return std::lognormal_distribution<double>(
             std::log(slow ? 0.2 : 0.005), 0.2)(rng);
       }},
      {"pareto_heavy_tail",
       [](std::mt19937_64& rng) {
         const double u = std::uniform_real_distribution<double>(0, 1)(rng);
         return 0.001 / std::pow(1 - u, 1 / 1.1);  // alpha 1.1, from 1 ms
       }},
  };
}

TEST(LatencySketchTest, QuantilesWithinRelativeAccuracyOnDistributions) {
  for (const Distribution& d : Distributions()) {
    std::mt19937_64 rng(42);
    std::vector<double> values(200000);
    for (double& v : values) v = std::min(d.draw(rng), 1e6);
    const LatencySketch sketch = SketchOf(values);
    EXPECT_FALSE(sketch.collapsed()) << d.name;
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0}) {
      const double exact = ExactQuantile(values, q);
      const absl::StatusOr<double> estimate = sketch.Quantile(q);
      ASSERT_TRUE(estimate.ok()) << estimate.status();
      // The guarantee is the relative accuracy (0.5 %), inside the 1 % budget.
      EXPECT_LE(std::abs(*estimate - exact) / exact,
                kDefaultRelativeAccuracy * (1 + 1e-9))
          << d.name << " q=" << q << " exact=" << exact
          << " estimate=" << *estimate;
    }
    EXPECT_EQ(sketch.count(), static_cast<int64_t>(values.size()));
    EXPECT_EQ(sketch.min(), *std::min_element(values.begin(), values.end()));
    EXPECT_EQ(sketch.max(), *std::max_element(values.begin(), values.end()));
  }
}

TEST(LatencySketchTest, EveryBucketRepresentativeIsWithinAccuracy) {
  const LogMapping mapping(kDefaultRelativeAccuracy);
  for (double x = kMinValue; x < kMaxValue; x *= 1.0007) {
    const double v = mapping.Value(mapping.Index(x));
    ASSERT_LE(std::abs(v - x) / x, kDefaultRelativeAccuracy * (1 + 1e-9)) << x;
  }
}

TEST(LatencySketchTest, MergeIsAssociativeCommutativeAndEqualsConcatenation) {
  std::mt19937_64 rng(7);
  std::vector<double> a(5000), b(3000), c(7000);
  std::lognormal_distribution<double> slow(std::log(0.3), 1.0);
  std::lognormal_distribution<double> fast(std::log(0.0004), 0.5);
  for (double& v : a) v = fast(rng);
  for (double& v : b) v = slow(rng);
  for (double& v : c) v = std::bernoulli_distribution(0.5)(rng) ? 0 : fast(rng);
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  const LatencySketch expected = SketchOf(all);

  auto merged = [&](const std::vector<const std::vector<double>*>& parts,
                    bool right_nested) {
    if (right_nested) {  // x + (y + z)
      LatencySketch tail = SketchOf(*parts[2]);
      LatencySketch middle = SketchOf(*parts[1]);
      EXPECT_TRUE(middle.Merge(tail).ok());
      LatencySketch head = SketchOf(*parts[0]);
      EXPECT_TRUE(head.Merge(middle).ok());
      return head;
    }
    LatencySketch acc;  // ((empty + x) + y) + z
    for (const auto* part : parts) EXPECT_TRUE(acc.Merge(SketchOf(*part)).ok());
    return acc;
  };
  for (bool nested : {false, true}) {
    for (const auto& parts :
         std::vector<std::vector<const std::vector<double>*>>{
             {&a, &b, &c}, {&c, &a, &b}, {&b, &c, &a}}) {
      const LatencySketch m = merged(parts, nested);
      EXPECT_EQ(m.ToProto().SerializeAsString(),
                expected.ToProto().SerializeAsString());
      EXPECT_EQ(m.count(), expected.count());
      EXPECT_EQ(m.min(), expected.min());
      EXPECT_EQ(m.max(), expected.max());
      EXPECT_NEAR(m.sum(), expected.sum(), 1e-9 * expected.sum());
      for (double q : {0.5, 0.95, 0.99}) {
        EXPECT_EQ(*m.Quantile(q), *expected.Quantile(q));
      }
    }
  }
}

TEST(LatencySketchTest, CollapsingBoundsMemoryAndKeepsHighQuantiles) {
  std::mt19937_64 rng(3);
  std::vector<double> values(20000);
  std::uniform_real_distribution<double> exponent(-8, 2);  // 10 ns .. 100 s
  for (double& v : values) v = std::pow(10, exponent(rng));
  const LatencySketch sketch = SketchOf(values, /*max_buckets=*/256);
  EXPECT_TRUE(sketch.collapsed());
  const v1::LatencySketch proto = sketch.ToProto();
  EXPECT_LE(proto.counts_size() + proto.sparse_counts_size(), 256);
  for (double q : {0.9, 0.95, 0.99}) {  // above the collapsed range
    const double exact = ExactQuantile(values, q);
    EXPECT_LE(std::abs(*sketch.Quantile(q) - exact) / exact,
              kDefaultRelativeAccuracy * (1 + 1e-9));
  }
  // Collapsing does not depend on the order of merges.
  std::vector<double> low(values.begin(), values.begin() + 10000);
  std::vector<double> high(values.begin() + 10000, values.end());
  LatencySketch lh = SketchOf(low, 256);
  ASSERT_TRUE(lh.Merge(SketchOf(high, 256)).ok());
  LatencySketch hl = SketchOf(high, 256);
  ASSERT_TRUE(hl.Merge(SketchOf(low, 256)).ok());
  EXPECT_EQ(lh.ToProto().SerializeAsString(), proto.SerializeAsString());
  EXPECT_EQ(hl.ToProto().SerializeAsString(), proto.SerializeAsString());
}

TEST(LatencySketchTest, ProtoRoundTripDenseAndSparse) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(std::log(0.01), 0.3);
  std::vector<double> dense_values(10000);
  for (double& v : dense_values) v = dist(rng);
  std::vector<double> sparse_values = {0, 1e-6, 0.001, 0.5, 30, 300};
  for (const std::vector<double>* values : {&dense_values, &sparse_values}) {
    const LatencySketch sketch = SketchOf(*values);
    const v1::LatencySketch proto = sketch.ToProto();
    EXPECT_EQ(proto.counts_size() > 0, values == &dense_values);
    EXPECT_EQ(proto.sparse_counts_size() > 0, values == &sparse_values);
    v1::LatencySketch parsed;
    ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
    absl::StatusOr<LatencySketch> back = LatencySketch::FromProto(parsed);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ToProto().SerializeAsString(), proto.SerializeAsString());
    EXPECT_EQ(back->count(), sketch.count());
    // Without exact statistics they are estimated within the accuracy.
    EXPECT_NEAR(back->sum(), sketch.sum(),
                sketch.sum() * kDefaultRelativeAccuracy);
    EXPECT_NEAR(back->max(), sketch.max(),
                sketch.max() * kDefaultRelativeAccuracy);
    ASSERT_TRUE(back->SetExactStats(sketch.stats()).ok());
    for (double q : {0.0, 0.5, 0.95, 0.99, 1.0}) {
      EXPECT_EQ(*back->Quantile(q), *sketch.Quantile(q)) << q;
    }
  }
}

TEST(LatencySketchTest, ZerosAndErrors) {
  LatencySketch sketch;
  EXPECT_EQ(sketch.Quantile(0.5).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(sketch.Add(0, 3).ok());
  ASSERT_TRUE(sketch.Add(0.002).ok());
  EXPECT_EQ(*sketch.Quantile(0.5), 0);
  EXPECT_EQ(*sketch.Quantile(1), 0.002);  // the extremes are exact
  EXPECT_EQ(sketch.zero_count(), 3);
  for (double bad : {-1.0, std::nan(""), HUGE_VAL, 2e9}) {
    EXPECT_EQ(sketch.Add(bad).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(sketch.Add(0.1, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sketch.Add(0.1, kMaxTotalCount).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(sketch.count(), 4);  // unchanged by the failures
  EXPECT_EQ(sketch.Quantile(1.5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sketch.Quantile(std::nan("")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(LatencySketch::Create(0.5).ok());
  EXPECT_FALSE(LatencySketch::Create(0.005, 4).ok());
  // Different accuracies never merge.
  LatencySketch coarse = *LatencySketch::Create(0.01);
  ASSERT_TRUE(coarse.Add(0.1).ok());
  EXPECT_EQ(sketch.Merge(coarse).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(sketch.count(), 4);
}

// FromProto's dense fast path (a straight copy) and its collapsing path, and
// Merge's plain-add and folding paths, all keep the sketch of the data:
// bucket for bucket what adding the values one by one gives.
TEST(LatencySketchTest, ProtoRoundTripAndMergeKeepEveryBucket) {
  for (int max_buckets : {kDefaultMaxBuckets, 64}) {
    auto direct = LatencySketch::Create(kDefaultRelativeAccuracy, max_buckets);
    auto low = LatencySketch::Create(kDefaultRelativeAccuracy, max_buckets);
    auto high = LatencySketch::Create(kDefaultRelativeAccuracy, max_buckets);
    ASSERT_TRUE(direct.ok() && low.ok() && high.ok());
    for (int i = 0; i < 400; ++i) {
      const double v = 0.001 * std::pow(1.013, i);
      ASSERT_TRUE(direct->Add(v).ok());
      ASSERT_TRUE((i < 200 ? *low : *high).Add(v).ok());
    }
    auto low_back = LatencySketch::FromProto(low->ToProto(), max_buckets);
    auto high_back = LatencySketch::FromProto(high->ToProto(), max_buckets);
    ASSERT_TRUE(low_back.ok() && high_back.ok());
    // High into low (the receiver grows upwards, may fold its own lowest),
    // and low into high (the merged-in sketch's lowest buckets fold).
    LatencySketch up = *low_back;
    ASSERT_TRUE(up.Merge(*high_back).ok());
    LatencySketch down = *high_back;
    ASSERT_TRUE(down.Merge(*low_back).ok());
    for (int index = direct->mapping().Index(0.0005);
         index <= direct->mapping().Index(1000); ++index) {
      ASSERT_EQ(low_back->BucketCount(index), low->BucketCount(index)) << index;
      ASSERT_EQ(up.BucketCount(index), direct->BucketCount(index)) << index;
      ASSERT_EQ(down.BucketCount(index), direct->BucketCount(index)) << index;
    }
    EXPECT_EQ(up.count(), 400);
    EXPECT_EQ(up.collapsed(), max_buckets < 400);
    if (!low->collapsed()) {  // estimates hold only without collapsing
      EXPECT_NEAR(low_back->sum(), low->sum(),
                  low->sum() * kDefaultRelativeAccuracy);
    }
  }
}

// FromProto of a malformed sketch: InvalidArgument naming the field.
void ExpectRejected(const v1::LatencySketch& proto, const std::string& field) {
  absl::StatusOr<LatencySketch> sketch = LatencySketch::FromProto(proto);
  ASSERT_FALSE(sketch.ok()) << proto.DebugString();
  EXPECT_EQ(sketch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sketch.status().message().substr(0, field.size()), field)
      << sketch.status();
}

TEST(LatencySketchTest, MalformedProtosAreRejectedNotCrashing) {
  v1::LatencySketch good;
  good.set_relative_accuracy(kDefaultRelativeAccuracy);
  good.set_index_offset(-300);
  for (int c : {1, 0, 4}) good.add_counts(c);
  ASSERT_TRUE(LatencySketch::FromProto(good).ok());

  v1::LatencySketch p = good;
  p.set_relative_accuracy(0);
  ExpectRejected(p, "relative_accuracy");
  p.set_relative_accuracy(std::nan(""));
  ExpectRejected(p, "relative_accuracy");
  p = good;
  p.set_zero_count(-1);
  ExpectRejected(p, "zero_count");
  p = good;
  p.set_counts(1, -5);
  ExpectRejected(p, "counts[1]");
  p = good;
  p.set_index_offset(1 << 30);
  ExpectRejected(p, "index_offset");
  p.set_index_offset(std::numeric_limits<int32_t>::max());  // offset + k wraps
  ExpectRejected(p, "index_offset");
  p = good;
  for (int k = 0; k < kMaxBuckets; ++k) p.add_counts(1);
  ExpectRejected(p, "counts");
  p = good;
  p.add_sparse_indexes(5);
  p.add_sparse_counts(1);
  ExpectRejected(p, "counts, sparse_indexes");
  p.clear_counts();
  p.add_sparse_indexes(3);
  ExpectRejected(p, "sparse_counts");
  p.add_sparse_counts(1);
  ExpectRejected(p, "sparse_indexes[1]");  // 3 after 5
  p.set_sparse_indexes(1, 9);
  p.set_sparse_counts(0, -2);
  ExpectRejected(p, "sparse_counts[0]");
  p.set_sparse_counts(0, kMaxTotalCount);
  p.set_sparse_counts(1, kMaxTotalCount);
  ExpectRejected(p, "sparse_counts[1]");  // total overflow
  p.set_sparse_counts(1, 1);
  p.set_sparse_indexes(1, -100000);
  ExpectRejected(p, "sparse_indexes[1]");
}

TEST(LatencySketchTest, ExactStatsMustAgreeWithTheDistribution) {
  const LatencySketch sketch = SketchOf({0.010, 0.020, 0.030});
  const v1::LatencySketch proto = sketch.ToProto();
  auto check = [&](SketchStats stats) {
    return LatencySketch::FromProto(proto)->SetExactStats(stats);
  };
  EXPECT_TRUE(check(sketch.stats()).ok());
  SketchStats s = sketch.stats();
  s.count = 4;
  EXPECT_EQ(check(s).message().substr(0, 6), "count:");
  s = sketch.stats();
  s.min = 0.011;  // above the lowest bucket (only lower values may collapse)
  EXPECT_EQ(check(s).message().substr(0, 12), "min_seconds:");
  s = sketch.stats();
  s.max = 0.5;
  EXPECT_EQ(check(s).message().substr(0, 12), "max_seconds:");
  s = sketch.stats();
  s.sum = 1.0;
  EXPECT_EQ(check(s).message().substr(0, 12), "sum_seconds:");
  s.sum = -INFINITY;
  EXPECT_EQ(check(s).message().substr(0, 12), "sum_seconds:");
}

TEST(LatencySketchTest, CountAtOrBelowIsExactOutsideTheThresholdsBucket) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> draw(std::log(0.02), 0.8);
  std::vector<double> values(5000);
  for (double& v : values) v = draw(rng);
  values.push_back(0);  // the zero bucket counts below every threshold
  LatencySketch sketch = SketchOf(values);
  const double gamma = sketch.mapping().gamma();
  auto exact_at_or_below = [&](double t) {
    return static_cast<int64_t>(std::count_if(
        values.begin(), values.end(), [t](double v) { return v <= t; }));
  };
  for (double t = 0.001; t < 1; t *= 1.07) {
    const int64_t answer = sketch.CountAtOrBelow(t);
    // Exact outside t's bucket, which lies within (t / gamma, t * gamma).
    EXPECT_GE(answer, exact_at_or_below(t / gamma)) << t;
    EXPECT_LE(answer, exact_at_or_below(t * gamma)) << t;
  }
  EXPECT_EQ(sketch.CountAtOrBelow(sketch.max()), sketch.count());
  EXPECT_EQ(sketch.CountAtOrBelow(1e6), sketch.count());
  EXPECT_EQ(sketch.CountAtOrBelow(-1), 0);
  EXPECT_EQ(sketch.CountAtOrBelow(std::nan("")), 0);
  EXPECT_EQ(sketch.CountAtOrBelow(0), 1);  // only the zero
  EXPECT_EQ(LatencySketch().CountAtOrBelow(1), 0);
  // Merged sketches answer for the concatenated data.
  LatencySketch other = SketchOf({0.5, 0.5, 0.001});
  ASSERT_TRUE(sketch.Merge(other).ok());
  values.insert(values.end(), {0.5, 0.5, 0.001});
  EXPECT_GE(sketch.CountAtOrBelow(0.2), exact_at_or_below(0.2 / gamma));
  EXPECT_LE(sketch.CountAtOrBelow(0.2), exact_at_or_below(0.2 * gamma));
}

// Values spread evenly in log around an SLO threshold set in the middle of
// its bucket: the threshold's bucket is split, not counted whole as within
// the SLO (which over-counted good requests by half that bucket, 250 here).
TEST(LatencySketchTest, CountAtOrBelowSplitsTheThresholdsBucket) {
  LatencySketch sketch;
  const LogMapping& mapping = sketch.mapping();
  const int held = mapping.Index(0.1);
  const double threshold =
      std::sqrt(mapping.LowerBound(held) * mapping.UpperBound(held));
  std::vector<double> values;
  for (int i = 0; i < 10000; ++i) {
    values.push_back(0.09 * std::pow(0.11 / 0.09, (i + 0.5) / 10000));
  }
  sketch = SketchOf(values);
  const int64_t exact = std::count_if(values.begin(), values.end(),
                                      [&](double v) { return v <= threshold; });
  EXPECT_NEAR(sketch.CountAtOrBelow(threshold), exact, 5);
}

// A 0.5 % shift of every value moves the interpolated quantile by 0.5 %;
// the plain quantile moves in whole buckets.
TEST(LatencySketchTest, InterpolatedQuantileMovesWithTheData) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> draw(std::log(0.05), 0.5);
  std::vector<double> values(50000), faster;
  for (double& v : values) v = draw(rng);
  for (double v : values) faster.push_back(v / 1.005);
  const LatencySketch a = SketchOf(values), b = SketchOf(faster);
  for (double q : {0.5, 0.9, 0.95, 0.99}) {
    EXPECT_NEAR(
        std::log(*a.InterpolatedQuantile(q) / *b.InterpolatedQuantile(q)),
        std::log(1.005), 0.002)
        << q;
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double exact =
        sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
    EXPECT_NEAR(*a.InterpolatedQuantile(q) / exact, 1, a.mapping().gamma() - 1)
        << q;
  }
  EXPECT_FALSE(LatencySketch().InterpolatedQuantile(0.5).ok());
  EXPECT_FALSE(a.InterpolatedQuantile(2).ok());
  EXPECT_EQ(*a.InterpolatedQuantile(1), a.max());
}

// The review's case: a bucket holding one value, a rank 0.9 past it. The
// estimate stays inside the bucket, within gamma - 1 of the value (it was
// 10.0917 ms for 9.952 ms: 1.40 % against the documented 1.005 %).
TEST(LatencySketchTest, InterpolatedQuantileStaysInsideItsBucket) {
  std::vector<double> values;
  for (int i = 1; i <= 11; ++i) values.push_back(i * 1e-3);
  values[9] = 9.952e-3;
  const LatencySketch sketch = SketchOf(values);
  const double estimate = *sketch.InterpolatedQuantile(0.99);
  EXPECT_NEAR(estimate / 9.952e-3, 1, sketch.mapping().gamma() - 1) << estimate;
}

}  // namespace
}  // namespace phaseloop::sli
