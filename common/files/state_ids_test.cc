#include "common/files/state_ids.h"

#include <filesystem>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

TEST(StateIdsTest, TheRuleAndTheListing) {
  EXPECT_TRUE(CheckStateId("demo-1.a_b", "loop id", "x").ok());
  const std::vector<std::string> bad_ids = {"", ".hidden", "a/b", "sp ace",
                                            std::string(101, 'a')};
  for (const std::string& bad : bad_ids) {
    const absl::Status s = CheckStateId(bad, "loop id", "the loop's dir");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("loop id '"), std::string::npos);
    EXPECT_NE(s.message().find("the loop's dir"), std::string::npos);
  }
  const std::string root = testing::MakeTempDir();
  for (const char* name : {"b", "a", ".helpers-1", "c d"}) {
    std::filesystem::create_directories(root + "/" + name);
  }
  EXPECT_EQ(ListStateIds(root), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ListStateIds(root + "/missing").empty());
}

}  // namespace
}  // namespace phaseloop::files
