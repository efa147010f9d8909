#include "staging_harness/staging/speed_gate.h"

#include <cmath>

#include "gtest/gtest.h"

namespace phaseloop::staging {
namespace {

StageResult Measured(const std::string& name, double median, double low,
                     double high) {
  StageResult r;
  r.workload = name;
  r.verdict = Verdict::kMeasured;
  r.timing.emplace();
  r.timing->wall.median = median;
  r.timing->wall.low = low;
  r.timing->wall.high = high;
  return r;
}

StageResult Other(const std::string& name, Verdict verdict) {
  StageResult r;
  r.workload = name;
  r.verdict = verdict;
  r.detail = "why";
  return r;
}

TEST(SpeedGateTest, PassesWhenNoWorkloadIsSlower) {
  SpeedGateResult gate = JudgeSpeedPolicy({Measured("a", 1.04, 1.02, 1.06),
                                           Measured("b", 0.995, 0.985, 1.004),
                                           Other("c", Verdict::kIdentical)});
  EXPECT_TRUE(gate.passed);
  EXPECT_EQ(gate.workloads, 3);
  EXPECT_EQ(gate.faster, 1);
  EXPECT_EQ(gate.slower, 0);
  EXPECT_NEAR(gate.geomean_speedup, std::cbrt(1.04 * 0.995), 1e-12);
  EXPECT_TRUE(gate.refusals.empty());
}

TEST(SpeedGateTest, AnIntervalBelowOneRefuses) {
  SpeedGateResult gate =
      JudgeSpeedPolicy({Measured("fast", 1.10, 1.08, 1.12),
                        Measured("slow", 0.99, 0.985, 0.999)});
  EXPECT_FALSE(gate.passed);
  EXPECT_EQ(gate.slower, 1);
  ASSERT_EQ(gate.refusals.size(), 1u);
  EXPECT_EQ(gate.refusals[0], "slow: slower: 0.9900 [0.9850, 0.9990]");
  // The geomean is reported, not judged: a fast workload does not buy a
  // slower one.
  EXPECT_GT(gate.geomean_speedup, 1.0);
}

TEST(SpeedGateTest, MiscompileUnusableAndNothingRefuse) {
  SpeedGateResult gate = JudgeSpeedPolicy({Measured("a", 1.01, 1.0, 1.02),
                                           Other("m", Verdict::kMiscompile),
                                           Other("u", Verdict::kUnusable)});
  EXPECT_FALSE(gate.passed);
  EXPECT_EQ(gate.miscompiled, 1);
  EXPECT_EQ(gate.unusable, 1);
  EXPECT_EQ(gate.refusals.size(), 2u);
  EXPECT_FALSE(JudgeSpeedPolicy({}).passed);
}

TEST(SpeedGateTest, FormatNamesEveryWorkloadAndTheVerdict) {
  const std::string text =
      FormatSpeedGate(JudgeSpeedPolicy({Measured("slow", 0.99, 0.985, 0.999),
                                        Other("same", Verdict::kIdentical)}));
  EXPECT_NE(text.find("slow"), std::string::npos);
  EXPECT_NE(text.find("same         identical"), std::string::npos);
  EXPECT_NE(text.find("speed gate: refused on 2 workloads"), std::string::npos);
  EXPECT_NE(text.find("refused: slow: slower"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::staging
