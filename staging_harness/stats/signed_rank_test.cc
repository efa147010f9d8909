#include "staging_harness/stats/signed_rank.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "staging_harness/stats/mann_whitney.h"

namespace phaseloop::stats {
namespace {

// The exact p by enumerating every sign assignment of the non-zero
// differences' midranks.
double EnumeratedP(const std::vector<double>& differences) {
  std::vector<double> d;
  for (double v : differences) {
    if (v != 0) d.push_back(v);
  }
  const int n = static_cast<int>(d.size());
  std::vector<double> rank(n);
  for (int i = 0; i < n; ++i) {
    double below = 0;
    double equal = 0;
    for (double v : d) {
      below += std::abs(v) < std::abs(d[i]);
      equal += std::abs(v) == std::abs(d[i]);
    }
    rank[i] = below + (equal + 1) / 2;
  }
  const double mean = n * (n + 1) / 4.0;
  double observed = 0;
  for (int i = 0; i < n; ++i) observed += d[i] > 0 ? rank[i] : 0;
  int64_t as_far = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += (mask >> i & 1) ? rank[i] : 0;
    as_far += std::abs(sum - mean) >= std::abs(observed - mean) - 1e-9;
  }
  return static_cast<double>(as_far) / static_cast<double>(1u << n);
}

TEST(WilcoxonSignedRank, AllPositiveIsTheMostExtremeOfTwoToTheN) {
  // Ranks 1..6 all positive: W+ = 21; only it and W+ = 0 are as extreme.
  auto result = WilcoxonSignedRank({0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->pairs, 6);
  EXPECT_DOUBLE_EQ(result->w_plus, 21);
  EXPECT_TRUE(result->exact);
  EXPECT_NEAR(result->p_value, 2.0 / 64, 1e-15);
  // Zeros are dropped; the sign of every difference flipped: the same p.
  auto flipped = WilcoxonSignedRank({0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6});
  ASSERT_TRUE(flipped.ok());
  EXPECT_EQ(flipped->pairs, 6);
  EXPECT_DOUBLE_EQ(flipped->w_plus, 0);
  EXPECT_DOUBLE_EQ(flipped->p_value, result->p_value);
}

TEST(WilcoxonSignedRank, ExactPAgreesWithEveryEnumeratedAssignment) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 14);
    std::vector<double> d(n);
    // Log speedups rounded to a few levels: many tied magnitudes, zeros.
    for (double& v : d) v = (static_cast<int>(rng() % 9) - 3) * 0.01;
    auto result = WilcoxonSignedRank(d);
    ASSERT_TRUE(result.ok());
    SCOPED_TRACE(::testing::PrintToString(d));
    if (result->pairs == 0) {
      EXPECT_EQ(result->p_value, 1);
      continue;
    }
    EXPECT_TRUE(result->exact);
    EXPECT_NEAR(result->p_value, EnumeratedP(d), 1e-12);
  }
}

// Pairs share the machine's moment: a 2 % speedup under pair-to-pair
// drift of +-10 % is plain to the pairs, lost between the two samples.
TEST(WilcoxonSignedRank, SeesAPairedDifferenceThatSpreadHides) {
  std::vector<double> baseline, candidate, log_speedups;
  for (int i = 0; i < 20; ++i) {
    const double machine = 1.0 + 0.1 * std::sin(i);  // the moment's speed
    baseline.push_back(machine * (1 + 0.002 * (i % 3)));
    candidate.push_back(machine / 1.02);
    log_speedups.push_back(std::log(baseline.back() / candidate.back()));
  }
  auto paired = WilcoxonSignedRank(log_speedups);
  ASSERT_TRUE(paired.ok());
  EXPECT_LT(paired->p_value, 1e-5);
  auto apart = MannWhitneyU(baseline, candidate);
  ASSERT_TRUE(apart.ok());
  EXPECT_GT(apart->p_value, 0.3);
}

TEST(WilcoxonSignedRank, ManyPairsUseTheNormalApproximation) {
  std::vector<double> d;
  for (int i = 1; i <= 61; ++i) d.push_back(i % 2 == 0 ? i : -i);
  auto result = WilcoxonSignedRank(d);  // 61 non-zero
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->exact);
  // W+ = 2 + 4 + ... + 60 = 930, mean 945.5, variance 61 62 123 / 24
  // = 19383.25, z = (15.5 - 0.5) / 139.224 = 0.107742, p = 0.914201.
  EXPECT_DOUBLE_EQ(result->w_plus, 930);
  EXPECT_NEAR(result->p_value, 0.9142006, 1e-6);
  d.pop_back();  // 60: exact, close to the approximation
  auto exact = WilcoxonSignedRank(d);
  ASSERT_TRUE(exact.ok());
  EXPECT_TRUE(exact->exact);
}

// n (n + 1) overflowed an int from 46,341 pairs.
TEST(WilcoxonSignedRank, ManyPairsDoNotOverflow) {
  std::vector<double> d;
  for (int i = 1; i <= 50000; ++i) d.push_back(i % 2 == 0 ? i : -i);
  auto result = WilcoxonSignedRank(d);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result->w_plus, 25000.0 * 25001);  // 2 + 4 + ... + 50000
  EXPECT_GT(result->p_value, 0.9);
  EXPECT_LE(result->p_value, 1);
}

TEST(WilcoxonSignedRank, RefusesNoDifferencesOrNonFiniteOnes) {
  EXPECT_FALSE(WilcoxonSignedRank({}).ok());
  EXPECT_FALSE(
      WilcoxonSignedRank({1, std::numeric_limits<double>::quiet_NaN()}).ok());
  auto zeros = WilcoxonSignedRank({0, 0});
  ASSERT_TRUE(zeros.ok());
  EXPECT_EQ(zeros->pairs, 0);
  EXPECT_EQ(zeros->p_value, 1);
}

}  // namespace
}  // namespace phaseloop::stats
