#include "compiler_driver/cc_wrapper/tu_optimizer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/testing/test_util.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/testing/fixture_paths.h"

namespace phaseloop::cc_wrapper {
namespace {

std::string Bitcode(const std::string& fixture, ir::OptLevel level) {
  for (const std::string& path : testing::FixturePaths()) {
    if (path.find(fixture) == std::string::npos) continue;
    ir::FrontendOptions options;
    options.opt_level = level;
    auto bitcode = ir::CompileToBitcode(path, options);
    EXPECT_TRUE(bitcode.ok()) << bitcode.status();
    return bitcode.ok() ? *bitcode : "";
  }
  ADD_FAILURE() << "no fixture " << fixture;
  return "";
}

TEST(TuOptimizerTest, RunsThePolicysPipelineAndReportsWhatItDid) {
  auto policy = LoadPolicy("fixed:function(sroa,instcombine),default<Oz>");
  ASSERT_TRUE(policy.ok());
  auto result = OptimizeTranslationUnit(Bitcode("sorting.c", ir::OptLevel::kOz),
                                        "Oz", {}, **policy);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->pipeline, "function(sroa,instcombine),default<Oz>");
  EXPECT_LT(result->ir_count_after, result->ir_count_before);
  EXPECT_GT(result->text_size, 0);
  EXPECT_EQ(result->object.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(result->module_hash.size(), 32u);
}

TEST(TuOptimizerTest, FailuresNameTheirReason) {
  auto baseline = LoadPolicy("baseline");
  // An allowed pass with a parameter LLVM rejects: passes the policy check
  // at load time (passes/pipeline_check.h), fails in LLVM's parser.
  auto bogus = LoadPolicy("fixed:function(sroa<no-such-option>)");
  ASSERT_TRUE(baseline.ok() && bogus.ok());
  const std::string bitcode = Bitcode("bits.c", ir::OptLevel::kO2);

  auto garbage = OptimizeTranslationUnit("not bitcode", "O2", {}, **baseline);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().message().substr(0, 16), "invalid_bitcode:");

  auto unparsable = OptimizeTranslationUnit(bitcode, "O2", {}, **bogus);
  ASSERT_FALSE(unparsable.ok());
  EXPECT_EQ(unparsable.status().message().substr(0, 17), "invalid_pipeline:");

  setenv(kInjectFaultEnv, "break-ir", 1);
  auto broken = OptimizeTranslationUnit(bitcode, "O2", {}, **baseline);
  unsetenv(kInjectFaultEnv);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message().substr(0, 16), "verifier_failed:");
}

TEST(TuOptimizerTest, CountingExecutedInstructionsChangesOnlyTheObject) {
  auto policy = LoadPolicy("fixed:default<O2>");
  ASSERT_TRUE(policy.ok());
  const std::string bitcode = Bitcode("sorting.c", ir::OptLevel::kO2);
  auto plain = OptimizeTranslationUnit(bitcode, "O2", {}, **policy);
  auto counting = OptimizeTranslationUnit(bitcode, "O2", {}, **policy,
                                          /*count_executed=*/true);
  ASSERT_TRUE(plain.ok() && counting.ok());
  // The policy's result is what the decision reports either way.
  EXPECT_EQ(counting->ir_count_after, plain->ir_count_after);
  EXPECT_EQ(counting->pipeline, plain->pipeline);
  EXPECT_EQ(plain->object.find("__phaseloop_executed_count"),
            std::string::npos);
  EXPECT_NE(counting->object.find("__phaseloop_executed_count"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
