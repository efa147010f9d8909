#include "staging_harness/staging/executed_ir.h"

#include "gtest/gtest.h"

namespace phaseloop::staging {
namespace {

v1::Decision Decision(v1::DecisionOutcome outcome, const std::string& reason) {
  v1::Decision d;
  d.set_outcome(outcome);
  d.set_reason(reason);
  return d;
}

TEST(ExecutedIrTest, EveryProcessOfEveryRunIsSummed) {
  ExecutedIr total;
  AddExecutedCounts("small", "10 100\n11 23\n", &total);
  AddExecutedCounts("large", "12 1000\n", &total);
  EXPECT_TRUE(total.available);
  EXPECT_EQ(total.count, 1123);
  EXPECT_EQ(total.processes, 3);
}

TEST(ExecutedIrTest, ARunWithoutALineMakesItUnavailable) {
  ExecutedIr total;
  AddExecutedCounts("small", "10 100\n", &total);
  AddExecutedCounts("quick", "", &total);
  AddExecutedCounts("large", "12 1000\n", &total);
  EXPECT_FALSE(total.available);
  EXPECT_NE(total.unavailable.find("run 'quick' wrote no count"),
            std::string::npos)
      << total.unavailable;
  EXPECT_EQ(ExecutedIrRatio(total, total), 0);
}

TEST(ExecutedIrTest, AMalformedLineMakesItUnavailable) {
  ExecutedIr total;
  AddExecutedCounts("small", "10 100\n11 1", &total);  // whole lines only
  EXPECT_TRUE(total.available);
  AddExecutedCounts("torn", "12 10013 5\n", &total);
  EXPECT_FALSE(total.available);
  EXPECT_NE(total.unavailable.find("'12 10013 5'"), std::string::npos)
      << total.unavailable;
}

TEST(ExecutedIrTest, TheRatioIsBaselineOverCandidate) {
  ExecutedIr baseline, candidate;
  AddExecutedCounts("r", "1 300\n", &baseline);
  AddExecutedCounts("r", "1 200\n", &candidate);
  EXPECT_DOUBLE_EQ(ExecutedIrRatio(baseline, candidate), 1.5);
}

TEST(ExecutedIrTest, CompilesThatRanPlainClangLeaveCodeUncounted) {
  EXPECT_EQ(UncountedUnits({Decision(v1::OPTIMIZED, ""),
                            Decision(v1::POLICY_NOT_APPLIED, "no_entry"),
                            Decision(v1::PASS_THROUGH, "not_compile_only")}),
            "");
  EXPECT_EQ(UncountedUnits({Decision(v1::OPTIMIZED, ""),
                            Decision(v1::PASS_THROUGH, "non_source_input")}),
            "");  // hand-written assembly has no IR
  const std::string why = UncountedUnits(
      {Decision(v1::OPTIMIZED, ""), Decision(v1::FAIL_OPEN, "codegen_failed"),
       Decision(v1::PASS_THROUGH, "optimization_disabled"),
       Decision(v1::PASS_THROUGH, "optimization_disabled")});
  EXPECT_NE(why.find("3 compile commands"), std::string::npos) << why;
  EXPECT_NE(why.find("codegen_failed 1, optimization_disabled 2"),
            std::string::npos)
      << why;
  EXPECT_NE(UncountedUnits({Decision(v1::PASS_THROUGH, "not_compile_only")})
                .find("no translation unit"),
            std::string::npos);
}

TEST(ExecutedIrTest, ABuildSystemsVerboseCompilerProbeIsNotTheProgram) {
  // CMake's ABI check (`cc -v` on a file of its own) before the program's
  // units: every CMake workload read "1 compile commands ... too_hard".
  v1::Decision probe = Decision(v1::PASS_THROUGH, "too_hard");
  probe.set_detail("-v");
  probe.set_source("/usr/share/cmake-3.25/Modules/CMakeCCompilerABI.c");
  EXPECT_EQ(UncountedUnits({probe, Decision(v1::OPTIMIZED, "")}), "");
  v1::Decision other = Decision(v1::PASS_THROUGH, "too_hard");
  other.set_detail("-save-temps");
  other.set_source("main.c");
  EXPECT_NE(UncountedUnits({other, Decision(v1::OPTIMIZED, "")}), "");
  // A unit of the program compiled with -v (a Makefile's verbose CFLAGS)
  // runs plain clang all the same: its code is not counted, and said so.
  v1::Decision verbose = Decision(v1::PASS_THROUGH, "too_hard");
  verbose.set_detail("-v");
  verbose.set_source("src/hot.c");
  EXPECT_NE(UncountedUnits({verbose, Decision(v1::OPTIMIZED, "")})
                .find("1 compile commands of the counting build ran plain "
                      "clang (too_hard 1)"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::staging
