#include "compiler_driver/policy_runtime/state_features.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::policy_runtime {
namespace {

TEST(StateFeaturesTest, DimensionIsCountsPlusTotalPlusHistogram) {
  EXPECT_EQ(StateDim(0), 127);
  EXPECT_EQ(StateDim(122), 249);
}

TEST(StateFeaturesTest, ValuesByHand) {
  std::vector<int64_t> autophase(56, 0);
  std::vector<int64_t> inst_count(70, 0);
  inst_count[0] = 200;  // TotalInsts
  inst_count[1] = 10;   // TotalBlocks
  autophase[0] = 50;
  autophase[55] = 1;
  const std::vector<int32_t> taken = {2, 0, 2, 7, -1};  // 7, -1 ignored
  std::vector<float> out(StateDim(3), -99.0f);
  BuildState(autophase, inst_count, taken, 3, absl::MakeSpan(out));
  EXPECT_FLOAT_EQ(out[0], std::log1p(1000.0 * 50 / 200));  // log1p(250)
  EXPECT_FLOAT_EQ(out[1], 0.0f);
  EXPECT_FLOAT_EQ(out[55], std::log1p(1000.0 * 1 / 200));   // log1p(5)
  EXPECT_FLOAT_EQ(out[56], std::log1p(1000.0));             // TotalInsts
  EXPECT_FLOAT_EQ(out[57], std::log1p(1000.0 * 10 / 200));  // log1p(50)
  EXPECT_FLOAT_EQ(out[125], 0.0f);
  EXPECT_FLOAT_EQ(out[126], std::log1p(200.0));
  EXPECT_FLOAT_EQ(out[127], 1.0f);
  EXPECT_FLOAT_EQ(out[128], 0.0f);
  EXPECT_FLOAT_EQ(out[129], 2.0f);
}

TEST(StateFeaturesTest, EmptyModuleDividesByOne) {
  std::vector<int64_t> autophase(56, 0);
  std::vector<int64_t> inst_count(70, 0);
  autophase[3] = 2;  // a count without instructions: 1000 * 2 / max(1, 0)
  std::vector<float> out(StateDim(1));
  BuildState(autophase, inst_count, {}, 1, absl::MakeSpan(out));
  EXPECT_FLOAT_EQ(out[3], std::log1p(2000.0));
  EXPECT_FLOAT_EQ(out[126], 0.0f);
  EXPECT_FLOAT_EQ(out[127], 0.0f);
}

}  // namespace
}  // namespace phaseloop::policy_runtime
