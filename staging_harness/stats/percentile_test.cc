#include "staging_harness/stats/percentile.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::stats {
namespace {

// NumPy: np.percentile([3, 1, 2], 50) = 2, ([1, 2, 3, 4], 50) = 2.5,
// ([0, 10], 95) = 9.5, ([1, 2, 3, 4, 5], 90) = 4.6.
TEST(PercentileTest, LinearInterpolationBetweenClosestRanks) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({3, 1, 2}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({0, 10}, 95), 9.5);
  EXPECT_DOUBLE_EQ(Percentile({5, 4, 3, 2, 1}, 90), 4.6);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(Percentile({1, 2, 3}, 100), 3);
  EXPECT_EQ(Percentile({1, 2, 3}, 0), 1);
  const std::vector<double> sorted = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(PercentileOfSorted(sorted, 90), 4.6);
}

TEST(PercentileTest, AllFiniteRefusesNanAndInfinity) {
  EXPECT_TRUE(AllFinite(std::vector<double>{}));
  EXPECT_TRUE(AllFinite(std::vector<double>{0, -1, 1e300}));
  EXPECT_FALSE(AllFinite(
      std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()}));
  EXPECT_FALSE(
      AllFinite(std::vector<double>{std::numeric_limits<double>::infinity()}));
}

}  // namespace
}  // namespace phaseloop::stats
