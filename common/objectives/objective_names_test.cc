#include "common/objectives/objective_names.h"

#include <string>

#include "gtest/gtest.h"

namespace phaseloop::objectives {
namespace {

TEST(ObjectiveNamesTest, ObjectSizesAreTheTwoSizeObjectives) {
  EXPECT_TRUE(IsObjectSizeObjective(kObjectiveAllocSize));
  EXPECT_TRUE(IsObjectSizeObjective(std::string("text_size")));
  EXPECT_FALSE(IsObjectSizeObjective(kObjectiveIrCount));
  EXPECT_FALSE(IsObjectSizeObjective(kObjectiveRuntime));
  EXPECT_FALSE(IsObjectSizeObjective(""));
  EXPECT_FALSE(IsObjectSizeObjective("alloc_size "));
}

}  // namespace
}  // namespace phaseloop::objectives
