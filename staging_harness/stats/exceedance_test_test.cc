#include "staging_harness/stats/exceedance_test.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::stats {
namespace {

// Expected p-values are exact sums of hypergeometric probabilities, computed
// with Python's math.comb and fractions (the tables no more likely than the
// observed one; the same figures as R's fisher.test and
// scipy.stats.fisher_exact).
TEST(FisherExactTwoSided, MatchesExactSums) {
  EXPECT_NEAR(FisherExactTwoSided(1, 9, 11, 3), 0.0027594561852200836, 1e-12);
  EXPECT_NEAR(FisherExactTwoSided(3, 1, 1, 3), 0.4857142857142857, 1e-12);
  EXPECT_NEAR(FisherExactTwoSided(2, 98, 9, 91), 0.058220717580287504, 1e-12);
  EXPECT_NEAR(FisherExactTwoSided(50, 950, 111, 889), 6.215307412164809e-07,
              1e-15);
  EXPECT_NEAR(FisherExactTwoSided(5, 5, 5, 5), 1.0, 1e-9);
  EXPECT_NEAR(FisherExactTwoSided(0, 10, 0, 10), 1.0, 1e-9);
}

// The review's case: the slowest tenth of the canary's requests 25 %
// slower, the median unchanged. Mann-Whitney barely moves; the tail test
// sees it at once.
TEST(ExceedanceTest, SeesATailOnlyRegression) {
  std::vector<double> baseline, canary;
  for (int i = 0; i < 1000; ++i) {
    const double v = 10 + 0.01 * i;  // 10 .. 19.99, evenly spread
    baseline.push_back(v);
    canary.push_back(v >= 19 ? v * 1.25 : v);  // the top 10 % slower
  }
  auto result = ExceedanceTest(baseline, canary, 95);
  ASSERT_TRUE(result.ok()) << result.status();
  // Pooled p95 lies inside the canary's moved tail: above it, the baseline
  // keeps only its top values, the canary its whole slowed tenth.
  EXPECT_LT(result->above_a, result->above_b);
  EXPECT_EQ(result->above_b, 100);
  EXPECT_LT(result->p_value, 1e-6);
}

TEST(ExceedanceTest, IdenticalSamplesAreNotDifferent) {
  std::vector<double> a;
  for (int i = 0; i < 300; ++i) a.push_back(std::fmod(i * 7.3, 19.0));
  auto result = ExceedanceTest(a, a, 95);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->above_a, result->above_b);
  EXPECT_NEAR(result->p_value, 1.0, 1e-9);
}

// Worked by hand: pooled {1, ..., 8}, p75 at rank 0.75 * 7 = 5.25, between
// 6 and 7: 6.25; above it, a's 7 and b's 8.
TEST(ExceedanceTest, ThresholdIsThePooledPercentile) {
  const std::vector<double> a = {1, 3, 5, 7};
  const std::vector<double> b = {2, 4, 6, 8};
  auto result = ExceedanceTest(a, b, 75);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result->threshold, 6.25);
  EXPECT_EQ(result->above_a, 1);
  EXPECT_EQ(result->above_b, 1);
  EXPECT_NEAR(result->p_value, 1.0, 1e-9);
}

TEST(ExceedanceTest, RefusesWhatItCannotJudge) {
  const std::vector<double> some = {1, 2};
  const std::vector<double> none;
  const std::vector<double> nan = {1, std::nan("")};
  EXPECT_FALSE(ExceedanceTest(some, none, 95).ok());
  EXPECT_FALSE(ExceedanceTest(some, nan, 95).ok());
  EXPECT_FALSE(ExceedanceTest(some, some, 100).ok());
  EXPECT_FALSE(ExceedanceTest(some, some, 0).ok());
}

}  // namespace
}  // namespace phaseloop::stats
