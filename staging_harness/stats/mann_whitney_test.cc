#include "staging_harness/stats/mann_whitney.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::stats {
namespace {

// Expected figures are computed by hand below with the formulas of
// scipy.stats.mannwhitneyu(a, b, method="asymptotic") (continuity
// correction on): U_a = R_a - n_a (n_a + 1) / 2, mu = n_a n_b / 2,
// sigma^2 = n_a n_b / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))),
// z = (max(U_a, n_a n_b - U_a) - mu - 0.5) / sigma, p = erfc(z / sqrt 2).

TEST(MannWhitneyU, SeparatedSamplesWithoutTies) {
  // Ranks of a: 1..5, R_a = 15, U_a = 0, U_b = 25, mu = 12.5,
  // sigma^2 = 25 * 11 / 12 = 22.9167, sigma = 4.787136,
  // z = (25 - 12.5 - 0.5) / 4.787136 = 2.506718, p = 0.0121858.
  const std::vector<double> a = {1, 2, 3, 4, 5};
  const std::vector<double> b = {6, 7, 8, 9, 10};
  auto result = MannWhitneyU(a, b);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_DOUBLE_EQ(result->u, 0);
  EXPECT_NEAR(result->z, 2.506718, 1e-6);
  EXPECT_NEAR(result->p_value, 0.01218578, 1e-8);
  // Symmetric: the order of the samples changes U, not p.
  auto swapped = MannWhitneyU(b, a);
  ASSERT_TRUE(swapped.ok());
  EXPECT_DOUBLE_EQ(swapped->u, 25);
  EXPECT_DOUBLE_EQ(swapped->p_value, result->p_value);
}

TEST(MannWhitneyU, TiesShareRanksAndShrinkTheVariance) {
  // a = {1, 2, 2, 3}, b = {2, 3, 3, 4, 5}. Sorted: 1a 2a 2a 2b 3a 3b 3b 4b
  // 5b; the 2s share rank 3, the 3s rank 6. R_a = 1 + 3 + 3 + 6 = 13,
  // U_a = 13 - 10 = 3, U_b = 17, mu = 10. Ties: two groups of 3,
  // sum(t^3 - t) = 48; sigma^2 = 20 / 12 (10 - 48 / 72) = 15.5556,
  // sigma = 3.944053, z = 6.5 / 3.944053 = 1.648051, p = 0.0993422.
  const std::vector<double> a = {1, 2, 2, 3};
  const std::vector<double> b = {2, 3, 3, 4, 5};
  auto result = MannWhitneyU(a, b);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result->u, 3);
  EXPECT_NEAR(result->z, 1.648051, 1e-6);
  EXPECT_NEAR(result->p_value, 0.09934225, 1e-8);
}

TEST(MannWhitneyU, RunTimesOfTwoVariants) {
  // Times (s) of a baseline and a ~7 % slower candidate, 8 runs each. Only
  // 1.05 (a) exceeds 1.04 (b): U_a = 1, U_b = 63, mu = 32, no ties,
  // sigma^2 = 64 * 17 / 12 = 90.6667, sigma = 9.521905,
  // z = (63 - 32 - 0.5) / 9.521905 = 3.203141, p = 0.00135938.
  const std::vector<double> a = {1.02, 0.98, 1.01, 1.05,
                                 0.97, 1.00, 1.03, 0.99};
  const std::vector<double> b = {1.10, 1.08, 1.12, 1.04,
                                 1.09, 1.11, 1.07, 1.06};
  auto result = MannWhitneyU(a, b);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result->u, 1);
  EXPECT_NEAR(result->z, 3.203141, 1e-6);
  EXPECT_NEAR(result->p_value, 0.00135938, 1e-8);
}

TEST(MannWhitneyU, SameSamplesHavePOne) {
  // R_a = 1.5 + 3.5 + 5.5 = 10.5, U_a = 4.5 = mu: z = -0.5 / sigma < 0 and
  // erfc of a negative number exceeds 1, clipped to 1.
  const std::vector<double> a = {1, 2, 3};
  auto result = MannWhitneyU(a, a);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result->u, 4.5);
  EXPECT_EQ(result->p_value, 1);
  // Every value tied: sigma = 0, no evidence either way.
  const std::vector<double> flat = {2, 2, 2};
  auto tied = MannWhitneyU(flat, flat);
  ASSERT_TRUE(tied.ok());
  EXPECT_EQ(tied->p_value, 1);
}

TEST(MannWhitneyU, RefusesEmptyOrNonFiniteSamples) {
  const std::vector<double> some = {1, 2};
  EXPECT_FALSE(MannWhitneyU(some, {}).ok());
  EXPECT_FALSE(MannWhitneyU({}, some).ok());
  const std::vector<double> bad = {1, std::numeric_limits<double>::infinity()};
  EXPECT_FALSE(MannWhitneyU(some, bad).ok());
}

}  // namespace
}  // namespace phaseloop::stats
