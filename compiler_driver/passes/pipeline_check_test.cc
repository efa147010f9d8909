#include "compiler_driver/passes/pipeline_check.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler_driver/passes/action_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::passes {
namespace {

using ::testing::HasSubstr;

TEST(PipelineCheckTest, EveryActionAndStandardPipelineIsAllowed) {
  const std::set<std::string> not_for_policies = {
      "lower-ifunc", "lower-constant-intrinsics", "lower-global-dtors",
      "attributor", "attributor-cgscc"};
  for (const Action& action : ActionSpace::Llvm16().actions()) {
    if (not_for_policies.count(action.name)) {
      EXPECT_FALSE(CheckPolicyPipeline(action.pipeline).ok()) << action.name;
      continue;
    }
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

// The review's reproductions: lower-ifunc erased an exported ifunc (an
// undefined reference at link time); lower-constant-intrinsics before the
// inliner removed _FORTIFY_SOURCE's overflow check.
TEST(PipelineCheckTest, ActionsThatCanChangeWhatAProgramMeansAreRefused) {
  for (const char* pipeline :
       {"lower-ifunc", "lower-ifunc,default<O2>",
        "function(lower-constant-intrinsics),default<O2>", "lower-global-dtors",
        "default<Oz>,attributor", "cgscc(attributor-cgscc)"}) {
    absl::Status status = CheckPolicyPipeline(pipeline);
    EXPECT_TRUE(IsRefusedPipeline(status)) << pipeline;
    EXPECT_TRUE(IsNotForPolicies(status)) << pipeline;
    EXPECT_THAT(status.message(), HasSubstr("is not for policies")) << pipeline;
  }
}

// A pipeline 26,000 adaptors deep overflowed the reader's stack (the
// wrapper and the policy store crashed); 20,000 standard pipelines ran for
// minutes in gigabytes.
TEST(PipelineCheckTest, NestingLengthAndStandardPipelinesAreBounded) {
  auto nested = [](int depth) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += "function(";
    text += "instcombine";
    for (int i = 0; i < depth; ++i) text += ")";
    return text;
  };
  EXPECT_TRUE(CheckPolicyPipeline(nested(3)).ok());
  for (int depth : {17, 30000}) {
    absl::Status status = CheckPolicyPipeline(nested(depth));
    EXPECT_TRUE(IsRefusedPipeline(status)) << depth;
    EXPECT_THAT(status.message(), HasSubstr("nested adaptors")) << depth;
  }
  std::vector<std::string> many(1001, "instcombine");
  absl::Status status = CheckPolicyPipeline(absl::StrJoin(many, ","));
  EXPECT_TRUE(IsRefusedPipeline(status));
  EXPECT_THAT(status.message(), HasSubstr("more than 1000 elements"));
  many.resize(1000);
  EXPECT_TRUE(CheckPolicyPipeline(absl::StrJoin(many, ",")).ok());
  std::vector<std::string> standard(8, "default<O2>");
  EXPECT_TRUE(CheckPolicyPipeline(absl::StrJoin(standard, ",")).ok());
  standard.push_back("tuned<O2;unroll>");
  status = CheckPolicyPipeline(absl::StrJoin(standard, ","));
  EXPECT_TRUE(IsRefusedPipeline(status));
  EXPECT_THAT(status.message(), HasSubstr("at most 8 standard pipelines"));
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
       {"tuned<O3;inline-threshold=500>",
        "tuned<Oz;inline-threshold=0;merge-functions>",
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
