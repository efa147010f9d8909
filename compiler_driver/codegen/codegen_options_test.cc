#include "compiler_driver/codegen/codegen_options.h"

#include <gtest/gtest.h>

namespace phaseloop::codegen {
namespace {

TEST(CodegenOptions, APipelineWithoutTheElementIsAllIr) {
  auto split =
      SplitPipeline("default<Oz>,function(instcombine<max-iterations=1>)");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->ir_pipeline,
            "default<Oz>,function(instcombine<max-iterations=1>)");
  EXPECT_FALSE(split->codegen.any());
}

TEST(CodegenOptions, TheLastElementNamesCodegenOptions) {
  auto split = SplitPipeline("default<Oz>,mergefunc,codegen<machine-outliner>");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->ir_pipeline, "default<Oz>,mergefunc");
  EXPECT_TRUE(split->codegen.machine_outliner);

  auto alone = SplitPipeline("codegen<machine-outliner>");
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->ir_pipeline, "");
  EXPECT_TRUE(alone->codegen.machine_outliner);
}

TEST(CodegenOptions, SeveralOptionsInEitherOrderReadTheSame) {
  auto both =
      SplitPipeline("default<Oz>,codegen<no-jump-tables;machine-outliner>");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->codegen.machine_outliner);
  EXPECT_TRUE(both->codegen.no_jump_tables);
  EXPECT_EQ(CodegenOptionsText(both->codegen),
            "machine-outliner;no-jump-tables");
  EXPECT_EQ(JoinPipeline(both->ir_pipeline, both->codegen),
            "default<Oz>,codegen<machine-outliner;no-jump-tables>");

  auto tables = SplitPipeline("codegen<no-jump-tables>");
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_FALSE(tables->codegen.machine_outliner);
  EXPECT_TRUE(tables->codegen.no_jump_tables);
  EXPECT_NE(tables->codegen, both->codegen);

  auto split = SplitPipeline("default<O3>,codegen<split-functions>");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_TRUE(split->codegen.split_functions);
  EXPECT_FALSE(split->codegen.machine_outliner ||
               split->codegen.no_jump_tables);
  EXPECT_EQ(split->ir_pipeline, "default<O3>");
  EXPECT_NE(split->codegen, tables->codegen);
  EXPECT_EQ(JoinPipeline("default<O3>", split->codegen),
            "default<O3>,codegen<split-functions>");

  auto twice = SplitPipeline("codegen<no-jump-tables;no-jump-tables>");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("named twice"), std::string::npos)
      << twice.status();
}

TEST(CodegenOptions, JoinIsTheInverseOfSplit) {
  CodegenOptions outliner;
  outliner.machine_outliner = true;
  EXPECT_EQ(JoinPipeline("default<Oz>", {}), "default<Oz>");
  EXPECT_EQ(JoinPipeline("default<Oz>", outliner),
            "default<Oz>,codegen<machine-outliner>");
  EXPECT_EQ(JoinPipeline("", outliner), "codegen<machine-outliner>");
  for (const std::string text :
       {"default<Oz>", "default<Oz>,codegen<machine-outliner>",
        "function(sroa),codegen<machine-outliner>",
        "default<Oz>,codegen<no-jump-tables>",
        "default<Oz>,codegen<machine-outliner;no-jump-tables>"}) {
    auto split = SplitPipeline(text);
    ASSERT_TRUE(split.ok()) << text;
    EXPECT_EQ(JoinPipeline(split->ir_pipeline, split->codegen), text);
  }
  EXPECT_EQ(CodegenOptionsText(outliner), "machine-outliner");
  EXPECT_EQ(CodegenOptionsText({}), "");
}

TEST(CodegenOptions, MisplacedUnknownOrMalformedElementsAreNamed) {
  auto misplaced = SplitPipeline("codegen<machine-outliner>,default<Oz>");
  ASSERT_FALSE(misplaced.ok());
  EXPECT_NE(misplaced.status().message().find("must be the last"),
            std::string::npos);

  auto unknown = SplitPipeline("default<Oz>,codegen<fast-isel>");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.status().message().find("unknown codegen option 'fast-isel'"),
      std::string::npos)
      << unknown.status();
  EXPECT_NE(unknown.status().message().find("newer phaseloop"),
            std::string::npos);
  EXPECT_NE(unknown.status().message().find("no-jump-tables"),
            std::string::npos)
      << "the message lists every known option";

  EXPECT_FALSE(SplitPipeline("default<Oz>,codegen<machine-outliner").ok());
  EXPECT_FALSE(SplitPipeline("default<Oz>,codegen<>").ok());
}

}  // namespace
}  // namespace phaseloop::codegen
