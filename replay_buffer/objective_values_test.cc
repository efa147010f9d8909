#include "replay_buffer/objective_values.h"

#include "gtest/gtest.h"

namespace phaseloop::replay_buffer {
namespace {

TEST(ObjectiveValuesTest, EachObjectiveReadsItsOwnField) {
  v1::Step step;
  step.set_ir_count_after(10);
  step.set_text_size_after(200);
  step.set_alloc_size_after(300);
  EXPECT_EQ(StepValue(step, "ir_count"), 10);
  EXPECT_EQ(StepValue(step, "text_size"), 200);
  EXPECT_EQ(StepValue(step, "alloc_size"), 300);
  EXPECT_EQ(StepValue(step, "runtime"), 0);

  v1::Episode episode;
  episode.set_final_ir_count(11);
  episode.set_final_text_size(201);
  episode.set_final_alloc_size(301);
  EXPECT_EQ(FinalValue(episode, "ir_count"), 11);
  EXPECT_EQ(FinalValue(episode, "text_size"), 201);
  EXPECT_EQ(FinalValue(episode, "alloc_size"), 301);

  v1::ModuleRecord module;
  module.set_ir_count_oz(12);
  module.set_text_size_oz(202);
  EXPECT_EQ(OzValue(module, "ir_count"), 12);
  EXPECT_EQ(OzValue(module, "text_size"), 202);
  // A record written before alloc_size_oz existed: unknown, not -Oz = 0.
  EXPECT_EQ(OzValue(module, "alloc_size"), 0);
  module.set_alloc_size_oz(302);
  EXPECT_EQ(OzValue(module, "alloc_size"), 302);
}

TEST(ObjectiveValuesTest, NamesTheMeasuredAndTheObjectSizeObjectives) {
  for (const char* o : {"alloc_size", "text_size", "ir_count"}) {
    EXPECT_TRUE(IsMeasuredObjective(o)) << o;
  }
  EXPECT_FALSE(IsMeasuredObjective("runtime"));
  EXPECT_FALSE(IsMeasuredObjective("alloc"));
  EXPECT_TRUE(IsObjectSizeObjective("alloc_size"));
  EXPECT_TRUE(IsObjectSizeObjective("text_size"));
  EXPECT_FALSE(IsObjectSizeObjective("ir_count"));
}

}  // namespace
}  // namespace phaseloop::replay_buffer
