#include "staging_harness/search/greedy_search.h"

#include <gtest/gtest.h>

namespace phaseloop::search {
namespace {

TEST(GreedySearch, NeverWorseThanStartAndReplayable) {
  auto start = session::CompilationSession::StartFromFile(
      "compiler_driver/fixtures/recursion.c", ir::FrontendOptions{},
      session::SessionOptions{});
  ASSERT_TRUE(start.ok()) << start.status();
  const int64_t before = (*start)->IrCount();
  // Work ends the search (two levels of 122 actions); the clock is only a
  // safety net, so a loaded machine finds the same sequence.
  auto result = GreedySearch(**start, Objective::kIrCount,
                             /*budget_seconds=*/3600, /*max_evaluations=*/244);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->evaluations, 244);
  EXPECT_EQ(result->actions.size(), 2u);  // one action kept per level
  EXPECT_LT(result->ir_count, before);
  EXPECT_FALSE(result->actions.empty());
  EXPECT_TRUE((*start)->history().empty());  // start untouched
  // The reported sequence reproduces the reported figures.
  auto replay = (*start)->Fork();
  ASSERT_TRUE(replay->Step(result->actions).ok());
  EXPECT_EQ(replay->IrCount(), result->ir_count);
  EXPECT_EQ(*replay->TextSize(), result->text_size);
  EXPECT_EQ(*replay->AllocSize(), result->alloc_size);
  EXPECT_GT(result->alloc_size, result->text_size);  // .eh_frame, .rodata...
}

// The size objective is the whole object: greedy keeps an action only when
// it lowers the allocated bytes, so the result is never larger than the
// start in total, whatever .text does.
TEST(GreedySearch, AllocSizeNeverGrowsTheObject) {
  auto start = session::CompilationSession::StartFromFile(
      "compiler_driver/fixtures/recursion.c", ir::FrontendOptions{},
      session::SessionOptions{});
  ASSERT_TRUE(start.ok()) << start.status();
  absl::StatusOr<int64_t> before = (*start)->AllocSize();
  ASSERT_TRUE(before.ok()) << before.status();
  auto result = GreedySearch(**start, Objective::kAllocSize,
                             /*budget_seconds=*/3600, /*max_evaluations=*/122);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->evaluations, 122);
  ASSERT_EQ(result->actions.size(), 1u);  // -O0 code: some action shrinks it
  EXPECT_LT(result->alloc_size, *before);
  auto replay = (*start)->Fork();
  ASSERT_TRUE(replay->Step(result->actions).ok());
  EXPECT_EQ(*replay->AllocSize(), result->alloc_size);
}

TEST(GreedySearch, ParsesObjectives) {
  for (Objective o :
       {Objective::kIrCount, Objective::kTextSize, Objective::kAllocSize}) {
    EXPECT_EQ(ParseObjective(ObjectiveName(o)), o) << ObjectiveName(o);
  }
  EXPECT_EQ(ParseObjective("text_size"), Objective::kTextSize);
  EXPECT_EQ(ParseObjective("alloc_size"), Objective::kAllocSize);
  EXPECT_EQ(ParseObjective("speed"), std::nullopt);
}

}  // namespace
}  // namespace phaseloop::search
