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
  EXPECT_FALSE(MedianSpeedupInterval({}).ok());
}

TEST(MedianOrderStatistic, BinomialTailsByHand) {
  double coverage = 0;
  // n = 10 at 95 %: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024,
  // so x(2) and x(9), covering 1 - 22/1024.
  EXPECT_EQ(MedianOrderStatistic(10, 0.95, &coverage), 2u);
  EXPECT_DOUBLE_EQ(coverage, 1 - 22.0 / 1024);
  // n = 20 at 99 %: P(B <= 3) = 1351/2^20 <= 0.005 < P(B <= 4) = 6196/2^20.
  EXPECT_EQ(MedianOrderStatistic(20, 0.99, &coverage), 4u);
  EXPECT_NEAR(coverage, 1 - 2 * 1351.0 / 1048576, 1e-12);
  // n = 8 at 99 %: only the range, missing with 2 / 2^8 <= 0.01; n = 7
  // cannot reach 99 % (2 / 2^7 = 0.0156): 0, and the range's coverage.
  EXPECT_EQ(MedianOrderStatistic(8, 0.99, &coverage), 1u);
  EXPECT_DOUBLE_EQ(coverage, 1 - 2.0 / 256);
  EXPECT_EQ(MedianOrderStatistic(7, 0.99, &coverage), 0u);
  EXPECT_DOUBLE_EQ(coverage, 1 - 2.0 / 128);
  EXPECT_EQ(MedianOrderStatistic(1, 0.5, &coverage), 0u);
  EXPECT_DOUBLE_EQ(coverage, 0);
  // Thousands of values (2^-n underflows): still near the normal
  // approximation n/2 - 2.576 sqrt(n)/2 = 942.4 for n = 2000.
  EXPECT_NEAR(double(MedianOrderStatistic(2000, 0.99, &coverage)), 942, 1);
  EXPECT_GE(coverage, 0.99);
  EXPECT_LT(coverage, 0.992);
}

TEST(MedianSpeedupInterval, IsAPairOfOrderStatistics) {
  // Ratios 1.00, 1.01, ..., 1.09 (given shuffled): at 95 % x(2) and x(9).
  std::vector<TimedPair> pairs;
  for (int i : {3, 7, 0, 9, 5, 1, 8, 2, 6, 4}) pairs.push_back({1 + 0.01 * i, 1});
  auto interval = MedianSpeedupInterval(pairs, 0.95);
  ASSERT_TRUE(interval.ok()) << interval.status();
  EXPECT_DOUBLE_EQ(interval->median, 1.045);
  EXPECT_DOUBLE_EQ(interval->low, 1.01);
  EXPECT_DOUBLE_EQ(interval->high, 1.08);
  EXPECT_EQ(interval->pairs, 10u);
  EXPECT_DOUBLE_EQ(interval->confidence, 0.95);
  EXPECT_DOUBLE_EQ(interval->coverage, 1 - 22.0 / 1024);
  // At 99 % (the default) ten pairs give x(1) and x(10): the range.
  auto strict = MedianSpeedupInterval(pairs);
  ASSERT_TRUE(strict.ok());
  EXPECT_DOUBLE_EQ(strict->low, 1.00);
  EXPECT_DOUBLE_EQ(strict->high, 1.09);
  EXPECT_GE(strict->coverage, 0.99);
}

TEST(MedianSpeedupInterval, TooFewPairsGiveTheRangeAndAreNeverNarrow) {
  // Five identical pairs: a point, but five values cannot bound a median
  // at 99 % (the range misses with 2 / 32), so the harness keeps going.
  const std::vector<TimedPair> pairs(5, TimedPair{1.5, 1.0});
  auto interval = MedianSpeedupInterval(pairs);
  ASSERT_TRUE(interval.ok());
  EXPECT_DOUBLE_EQ(interval->low, 1.5);
  EXPECT_DOUBLE_EQ(interval->high, 1.5);
  EXPECT_DOUBLE_EQ(interval->coverage, 1 - 2.0 / 32);
  EXPECT_FALSE(NarrowEnough(*interval));
  // Eight are enough.
  auto eight = MedianSpeedupInterval(std::vector<TimedPair>(8, {1.5, 1.0}));
  ASSERT_TRUE(eight.ok());
  EXPECT_TRUE(NarrowEnough(*eight));
}

TEST(MedianSpeedupInterval, RefusesBadConfidence) {
  const std::vector<TimedPair> pairs = {{1, 1}};
  EXPECT_FALSE(MedianSpeedupInterval(pairs, 1.0).ok());
  EXPECT_FALSE(MedianSpeedupInterval(pairs, 0).ok());
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
  // Narrow, but too few pairs for the confidence asked.
  EXPECT_FALSE(NarrowEnough({.median = 1.0, .low = 0.995, .high = 1.005,
                             .confidence = 0.99, .coverage = 0.98}));
}

TEST(MedianSpeedupInterval, TwentyPairsWithinHalfAPercentAreNarrowEnough) {
  auto interval = MedianSpeedupInterval(TwentyPairs());
  ASSERT_TRUE(interval.ok());
  EXPECT_TRUE(NarrowEnough(*interval));
  // The same spread ten times wider (ratios 0.905 .. 1.095) is not.
  std::vector<TimedPair> wide;
  for (const TimedPair& p : TwentyPairs()) {
    wide.push_back({(p.baseline_s / p.candidate_s - 1) * 10 + 1, 1.0});
  }
  auto wide_interval = MedianSpeedupInterval(wide);
  ASSERT_TRUE(wide_interval.ok());
  EXPECT_FALSE(NarrowEnough(*wide_interval));
}

}  // namespace
}  // namespace phaseloop::stats
