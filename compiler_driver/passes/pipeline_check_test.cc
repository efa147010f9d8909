#include "compiler_driver/passes/pipeline_check.h"

#include <string>

#include "compiler_driver/passes/action_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::passes {
namespace {

using ::testing::HasSubstr;

TEST(PipelineCheckTest, EveryActionAndStandardPipelineIsAllowed) {
  for (const Action& action : ActionSpace::Llvm16().actions()) {
    EXPECT_TRUE(CheckPolicyPipeline(action.pipeline).ok()) << action.pipeline;
  }
  for (const char* level : {"O0", "O1", "O2", "O3", "Os", "Oz"}) {
    const std::string pipeline = std::string("default<") + level + ">";
    EXPECT_TRUE(CheckPolicyPipeline(pipeline).ok()) << pipeline;
  }
  EXPECT_TRUE(CheckPolicyPipeline("").ok());
}

TEST(PipelineCheckTest, SequencesNestingAndParametersOfAllowedPassesPass) {
  for (const char* pipeline :
       {"function(sroa,instcombine)", "function(sroa<modify-cfg>)",
        "function(sroa,instcombine),default<Oz>", "instcombine,gvn",
        "default<Oz>,scc-oz-module-inliner,function(loop(loop-rotate))",
        "globaldce",  // deletes only unreferenced internal definitions
        "cgscc(function-attrs),function(loop-mssa(licm<allowspeculation>))"}) {
    EXPECT_TRUE(CheckPolicyPipeline(pipeline).ok()) << pipeline;
  }
}

// The probe's reproductions: internalize made a TU's exported functions
// local (nm showed nothing, linking failed with undefined references).
TEST(PipelineCheckTest, PassesThatChangeWhatAProgramMeansAreRefused) {
  for (const char* pipeline :
       {"internalize", "internalize,globaldce", "default<O2>,internalize",
        "function(instcombine),module(internalize)"}) {
    absl::Status status = CheckPolicyPipeline(pipeline);
    ASSERT_FALSE(status.ok()) << pipeline;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(IsRefusedPipeline(status));
    EXPECT_THAT(status.message(), HasSubstr("'internalize'"));
    EXPECT_THAT(status.message(), HasSubstr("breaks separate compilation"));
  }
}

TEST(PipelineCheckTest, StripInstrumentationAndUnknownNamesAreRefused) {
  struct Case {
    const char* pipeline;
    const char* named;
  };
  for (const Case& c :
       {Case{"strip", "'strip'"}, Case{"function(tsan)", "'tsan'"},
        Case{"insert-gcov-profiling", "'insert-gcov-profiling'"},
        Case{"instcombine,no-such-pass", "'no-such-pass'"},
        Case{"function(gvn-sink)", "'gvn-sink'"}, Case{"chr", "'chr'"},
        Case{"default<O4>", "'default<O4>'"},
        Case{"thinlto-pre-link<O2>", "'thinlto-pre-link'"},
        Case{"repeat<2>(instcombine)", "'repeat<2>(instcombine)'"}}) {
    absl::Status status = CheckPolicyPipeline(c.pipeline);
    ASSERT_FALSE(status.ok()) << c.pipeline;
    EXPECT_TRUE(IsRefusedPipeline(status)) << c.pipeline;
    EXPECT_THAT(status.message(), HasSubstr(c.named)) << c.pipeline;
  }
}

// The test-only miscompile injection (compiler_driver/testing/miscompile)
// is a pass only its test binaries link; this test, like every production
// binary, links none, so a policy naming it is refused.
TEST(PipelineCheckTest, TestOnlyPassesAreRefusedWhereNotLinked) {
  for (const char* pipeline :
       {"phaseloop-test-miscompile", "default<O3>,phaseloop-test-miscompile",
        "phaseloop-test-miscompile<function=main>"}) {
    absl::Status status = CheckPolicyPipeline(pipeline);
    ASSERT_FALSE(status.ok()) << pipeline;
    EXPECT_TRUE(IsRefusedPipeline(status));
    EXPECT_THAT(status.message(), HasSubstr("'phaseloop-test-miscompile'"));
  }
}

TEST(PipelineCheckTest, MalformedPipelinesAreRefused) {
  for (const char* pipeline : {"function(sroa", "sroa)", "sroa<x", ",sroa",
                               "sroa,,gvn", "function()"}) {
    absl::Status status = CheckPolicyPipeline(pipeline);
    EXPECT_FALSE(status.ok()) << pipeline;
    EXPECT_TRUE(IsRefusedPipeline(status)) << pipeline;
  }
  EXPECT_FALSE(IsRefusedPipeline(absl::NotFoundError("no such file")));
}

// tuned<LEVEL;...>: the standard pipeline with other tuning, at the top
// level only, with parameters the parser accepts.
TEST(PipelineCheckTest, TunedStandardPipelinesAreAllowedAtTheTopLevel) {
  for (const char* pipeline :
       {"tuned<O3;inline-threshold=500>", "tuned<Oz;inline-threshold=0;merge-functions>",
        "default<O1>,tuned<O3;no-unroll>,function(instcombine)"}) {
    EXPECT_TRUE(CheckPolicyPipeline(pipeline).ok()) << pipeline;
  }
  struct Case {
    const char* pipeline;
    const char* says;
  };
  for (const Case& c : {
           Case{"tuned<O3;inline-threshold=huge>", "not 'huge'"},
           Case{"tuned<O0>", "the level 'O0'"},
           Case{"module(tuned<O3>)", "only at the top level"},
           Case{"tuned<O3>(instcombine)", "only at the top level"},
       }) {
    absl::Status status = CheckPolicyPipeline(c.pipeline);
    ASSERT_FALSE(status.ok()) << c.pipeline;
    EXPECT_TRUE(IsRefusedPipeline(status)) << c.pipeline;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.says)) << c.pipeline;
  }
}

}  // namespace
}  // namespace phaseloop::passes
