#include "staging_harness/staging/speed_gate.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "staging_harness/runner/runner_test_util.h"

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

// The review of this session's diff: under a trust file the wrapper refused
// the unsigned artifact being gated, built clang's program everywhere, and
// the gate passed it as "identical".
TEST(SpeedGateTest, APolicyTheWrapperCouldNotUseRefuses) {
  StageResult r = Other("a", Verdict::kIdentical);
  v1::Decision& d = r.candidate.decisions.emplace_back();
  d.set_outcome(v1::FAIL_OPEN);
  d.set_reason("policy_unsigned");
  d.set_detail("no signature beside the artifact");
  SpeedGateResult gate = JudgeSpeedPolicy({r});
  EXPECT_FALSE(gate.passed);
  ASSERT_EQ(gate.refusals.size(), 1u);
  EXPECT_NE(gate.refusals[0].find("could not use the policy (policy_unsigned"),
            std::string::npos)
      << gate.refusals[0];
}

TEST(SpeedGateTest, CheckedButUntimedPassesAndIsSaidSo) {
  SpeedGateResult gate = JudgeSpeedPolicy({Other("c", Verdict::kChecked)});
  EXPECT_TRUE(gate.passed);
  EXPECT_EQ(gate.untimed, 1);
  EXPECT_EQ(gate.geomean_speedup, 1.0);
  EXPECT_NE(FormatSpeedGate(gate).find("1 checked but not timed"),
            std::string::npos)
      << FormatSpeedGate(gate);
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

// The gate on a real workload (the example) through the real wrapper:
// verdicts that do not depend on timing — a policy that changes nothing
// passes without a timed run, a miscompiling one is refused.
class SpeedGateStagingTest : public ::testing::Test {
 protected:
  absl::StatusOr<SpeedGateResult> Gate(const std::string& policy,
                                       const std::string& wrapper,
                                       bool timed = true) {
    absl::StatusOr<workloads::Workload> example = runner::ExampleWorkload();
    if (!example.ok()) return example.status();
    absl::StatusOr<runner::Compilers> compilers =
        runner::RunfilesCompilers(wrapper);
    if (!compilers.ok()) return compilers.status();
    StageOptions options;
    options.compilers = *compilers;
    options.work_dir = testing::MakeTempDir();
    options.timing.min_pairs = 3;
    options.timing.max_pairs = 3;
    options.timing.warmup_passes = 0;
    options.time_candidate = timed;
    return RunSpeedGate(policy, {*example}, options, log_);
  }
  std::ostringstream log_;
};

TEST_F(SpeedGateStagingTest, APolicyThatChangesNothingPasses) {
  absl::StatusOr<SpeedGateResult> gate =
      Gate("baseline", "compiler_driver/cc_wrapper/phaseloop-cc");
  ASSERT_TRUE(gate.ok()) << gate.status() << log_.str();
  EXPECT_TRUE(gate->passed) << FormatSpeedGate(*gate);
  ASSERT_EQ(gate->results.size(), 1u);
  EXPECT_EQ(gate->results[0].verdict, Verdict::kIdentical);
  EXPECT_EQ(gate->geomean_speedup, 1.0);
  EXPECT_NE(log_.str().find("gate: staging example (train)"), std::string::npos)
      << log_.str();
}

TEST_F(SpeedGateStagingTest, AMiscompilingPolicyIsRefused) {
  absl::StatusOr<SpeedGateResult> gate =
      Gate("fixed:default<O3>,phaseloop-test-miscompile",
           "compiler_driver/testing/miscompile/phaseloop-cc");
  ASSERT_TRUE(gate.ok()) << gate.status() << log_.str();
  EXPECT_FALSE(gate->passed);
  EXPECT_EQ(gate->miscompiled, 1);
  ASSERT_EQ(gate->refusals.size(), 1u);
  EXPECT_EQ(gate->refusals[0].rfind("example: miscompile: ", 0), 0u)
      << gate->refusals[0];
}

// Untimed: a policy that changes the binary is checked, not timed; a
// miscompiling one is still refused.
TEST_F(SpeedGateStagingTest, AnUntimedGateChecksOutputsOnly) {
  absl::StatusOr<SpeedGateResult> gate =
      Gate("fixed:default<O1>", "compiler_driver/cc_wrapper/phaseloop-cc",
           /*timed=*/false);
  ASSERT_TRUE(gate.ok()) << gate.status() << log_.str();
  ASSERT_EQ(gate->results.size(), 1u);
  EXPECT_EQ(gate->results[0].verdict, Verdict::kChecked) << log_.str();
  EXPECT_FALSE(gate->results[0].timing.has_value());
  EXPECT_TRUE(gate->passed) << FormatSpeedGate(*gate);
  EXPECT_TRUE(RecordsOf(gate->results[0]).rewards.empty());

  gate = Gate("fixed:default<O3>,phaseloop-test-miscompile",
              "compiler_driver/testing/miscompile/phaseloop-cc",
              /*timed=*/false);
  ASSERT_TRUE(gate.ok()) << gate.status() << log_.str();
  EXPECT_FALSE(gate->passed);
  EXPECT_EQ(gate->miscompiled, 1);
}

TEST(SpeedGateOptionsTest, ASplitWithoutWorkloadsIsBadInput) {
  SpeedGateOptions options;
  options.workloads_dir = testing::MakeTempDir();
  const absl::Status checked = CheckSpeedGate(options);
  EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(checked.message().find("no workload of split 'test'"),
            std::string::npos)
      << checked;
  // The bundled workloads have a test split.
  options.workloads_dir = "configs/workloads";
  options.cc =
      std::filesystem::absolute("compiler_driver/cc_wrapper/phaseloop-cc")
          .string();
  EXPECT_TRUE(CheckSpeedGate(options).ok()) << CheckSpeedGate(options);
}

TEST(SpeedGateOptionsTest, NamesNarrowTheSplitAndMustExistInIt) {
  SpeedGateOptions options;
  options.workloads_dir = "configs/workloads";
  options.cc =
      std::filesystem::absolute("compiler_driver/cc_wrapper/phaseloop-cc")
          .string();
  options.names = {"bc"};  // a test-split workload
  EXPECT_TRUE(CheckSpeedGate(options).ok()) << CheckSpeedGate(options);
  options.names = {"lz4"};  // a train-split one: not the gate's to stage
  const absl::Status train = CheckSpeedGate(options);
  EXPECT_EQ(train.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(train.message().find("no workload named 'lz4' of split 'test'"),
            std::string::npos)
      << train;
}

}  // namespace
}  // namespace phaseloop::staging
