#include "staging_harness/stats/speedup.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::stats {
namespace {

using ::testing::HasSubstr;

TEST(Median, OddAndEvenCounts) {
  EXPECT_EQ(*Median({3, 1, 2}), 2);
  EXPECT_EQ(*Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(*Median({7}), 7);
  EXPECT_FALSE(Median({}).ok());
}

TEST(Quantile, InterpolatesLikeNumpysDefault) {
  // numpy.percentile([1, 2, 3, 4], q): position (n - 1) q = 3 q.
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.25), 1.75);  // 1 + 0.75 (2 - 1)
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.975), 3.925);  // 3 + 0.925 (4 - 3)
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1), 4);
  EXPECT_DOUBLE_EQ(Quantile({5}, 0.3), 5);
}

TEST(MedianSpeedup, IsTheMedianOfPerPairRatios) {
  // Ratios 1.0 / 0.5 = 2, 1.0 / 1.0 = 1, 2.5 / 2.0 = 1.25: median 1.25.
  // (The ratio of medians would be 1.0 / 1.0 = 1: pairing matters.)
  const std::vector<TimedPair> pairs = {{1.0, 0.5}, {1.0, 1.0}, {2.5, 2.0}};
  EXPECT_DOUBLE_EQ(*MedianSpeedup(pairs), 1.25);
}

TEST(MedianSpeedup, RefusesTimesThatAreNotPositive) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const TimedPair& bad :
       {TimedPair{1, 0}, TimedPair{-1, 1}, TimedPair{nan, 1}}) {
    const std::vector<TimedPair> pairs = {{1, 1}, bad};
    auto speedup = MedianSpeedup(pairs);
    ASSERT_FALSE(speedup.ok());
    EXPECT_THAT(speedup.status().message(), HasSubstr("pair 1: times must be"));
  }
  EXPECT_FALSE(MedianSpeedup({}).ok());
  EXPECT_FALSE(BootstrapSpeedup({}).ok());
}

TEST(BootstrapSpeedup, TwoPairsByHand) {
  // Ratios {1.0, 1.2}. A resample of two draws {1.0, 1.0} (probability
  // 1/4, median 1.0), one of each (1/2, median 1.1) or {1.2, 1.2} (1/4,
  // median 1.2). With 10000 resamples about 2500 medians are 1.0 and 2500
  // are 1.2, so the 2.5 % and 97.5 % quantiles (positions 249.975 and
  // 9749.025 of the sorted medians) are 1.0 and 1.2 exactly.
  const std::vector<TimedPair> pairs = {{1.0, 1.0}, {1.2, 1.0}};
  auto interval = BootstrapSpeedup(pairs);
  ASSERT_TRUE(interval.ok()) << interval.status();
  EXPECT_DOUBLE_EQ(interval->median, 1.1);
  EXPECT_DOUBLE_EQ(interval->low, 1.0);
  EXPECT_DOUBLE_EQ(interval->high, 1.2);
  EXPECT_EQ(interval->pairs, 2u);
  // A 40 % interval (quantiles 0.3 and 0.7) sits inside the middle half,
  // where every median is 1.1.
  auto narrow = BootstrapSpeedup(pairs, {.confidence = 0.4});
  ASSERT_TRUE(narrow.ok());
  EXPECT_DOUBLE_EQ(narrow->low, 1.1);
  EXPECT_DOUBLE_EQ(narrow->high, 1.1);
}

// 20 pairs of an A/A-like comparison: ratios 0.99 .. 1.01 spread evenly,
// shuffled by a fixed permutation (i * 7 mod 20).
std::vector<TimedPair> TwentyPairs() {
  std::vector<TimedPair> pairs;
  for (int i = 0; i < 20; ++i) {
    const double ratio = 0.99 + 0.001 * ((i * 7) % 20) + 0.0005;
    pairs.push_back({ratio * 2.0, 2.0});
  }
  return pairs;
}

TEST(BootstrapSpeedup, IsDeterministicForASeed) {
  const auto pairs = TwentyPairs();
  auto first = BootstrapSpeedup(pairs, {.seed = 42});
  auto again = BootstrapSpeedup(pairs, {.seed = 42});
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->low, again->low);  // bit for bit
  EXPECT_EQ(first->high, again->high);
  // The seed drives the draws: with few resamples the ends move with it
  // (with 10000 the quantiles barely depend on it).
  auto few = BootstrapSpeedup(pairs, {.resamples = 20, .seed = 42});
  auto few_again = BootstrapSpeedup(pairs, {.resamples = 20, .seed = 42});
  auto few_other = BootstrapSpeedup(pairs, {.resamples = 20, .seed = 43});
  ASSERT_TRUE(few.ok() && few_again.ok() && few_other.ok());
  EXPECT_EQ(few->low, few_again->low);
  EXPECT_EQ(few->high, few_again->high);
  EXPECT_TRUE(few->low != few_other->low || few->high != few_other->high);
  // The sample median of ratios 0.9905, 0.9915, ..., 1.0095 is 1.0 and the
  // interval holds it, within the sample's range.
  EXPECT_DOUBLE_EQ(first->median, 1.0);
  EXPECT_LT(first->low, 1.0);
  EXPECT_GT(first->high, 1.0);
  EXPECT_GE(first->low, 0.9905);
  EXPECT_LE(first->high, 1.0095);
}

TEST(BootstrapSpeedup, IdenticalPairsGiveAPointInterval) {
  const std::vector<TimedPair> pairs(5, TimedPair{1.5, 1.0});
  auto interval = BootstrapSpeedup(pairs);
  ASSERT_TRUE(interval.ok());
  EXPECT_DOUBLE_EQ(interval->low, 1.5);
  EXPECT_DOUBLE_EQ(interval->high, 1.5);
  EXPECT_TRUE(NarrowEnough(*interval));
}

TEST(BootstrapSpeedup, RefusesBadOptions) {
  const std::vector<TimedPair> pairs = {{1, 1}};
  EXPECT_FALSE(BootstrapSpeedup(pairs, {.resamples = 0}).ok());
  EXPECT_FALSE(BootstrapSpeedup(pairs, {.confidence = 1.0}).ok());
  EXPECT_FALSE(BootstrapSpeedup(pairs, {.confidence = 0}).ok());
}

TEST(NarrowEnough, BothEndsWithinOnePercentOfTheMedian) {
  EXPECT_TRUE(NarrowEnough({.median = 1.0, .low = 0.995, .high = 1.009}));
  EXPECT_FALSE(NarrowEnough({.median = 1.0, .low = 0.995, .high = 1.011}));
  EXPECT_FALSE(NarrowEnough({.median = 1.0, .low = 0.989, .high = 1.001}));
  // Relative to the median: 1.04 / 1.05 = 0.99048, 1.06 / 1.05 = 1.00952.
  EXPECT_TRUE(NarrowEnough({.median = 1.05, .low = 1.04, .high = 1.06}));
  // Lopsided: (high - low) / 2 = 0.8 % but the low end is 1.5 % away.
  EXPECT_FALSE(NarrowEnough({.median = 1.0, .low = 0.985, .high = 1.001}));
  EXPECT_TRUE(NarrowEnough({.median = 1.0, .low = 0.985, .high = 1.001}, 0.02));
  EXPECT_FALSE(NarrowEnough({}));  // no estimate
}

TEST(BootstrapSpeedup, TwentyPairsWithinHalfAPercentAreNarrowEnough) {
  auto interval = BootstrapSpeedup(TwentyPairs());
  ASSERT_TRUE(interval.ok());
  EXPECT_TRUE(NarrowEnough(*interval));
  // The same spread ten times wider (ratios 0.905 .. 1.095) is not.
  std::vector<TimedPair> wide;
  for (const TimedPair& p : TwentyPairs()) {
    wide.push_back({(p.baseline_s / p.candidate_s - 1) * 10 + 1, 1.0});
  }
  auto wide_interval = BootstrapSpeedup(wide);
  ASSERT_TRUE(wide_interval.ok());
  EXPECT_FALSE(NarrowEnough(*wide_interval));
}

}  // namespace
}  // namespace phaseloop::stats
