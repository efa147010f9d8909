#include "common/files/output_paths.h"

#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

TEST(OutputPathsTest, AnOutputMustBeAFileInAnExistingDirectory) {
  const std::string dir = testing::MakeTempDir();
  EXPECT_TRUE(CheckOutputPath("--out", dir + "/new.json").ok());
  for (const std::string& bad :
       {std::string(""), dir, dir + "/missing/new.json"}) {
    const absl::Status s = CheckOutputPath("--out", bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_TRUE(absl::StartsWith(s.message(), "--out")) << s;
  }
}

TEST(OutputPathsTest, NoOutputIsAnInputOrAnotherOutput) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/buffer.db") << "x";
  ASSERT_EQ(symlink((dir + "/buffer.db").c_str(), (dir + "/alias").c_str()), 0);
  ASSERT_EQ(link((dir + "/buffer.db").c_str(), (dir + "/hard").c_str()), 0);
  const std::vector<FlagPath> inputs = {{"--buffer", dir + "/buffer.db"},
                                        {"--config", ""}};
  for (const std::string& same : {dir + "/buffer.db", dir + "/alias",
                                  dir + "/hard", dir + "/./buffer.db"}) {
    const absl::Status s = CheckOutputPaths({{"--out", same}}, inputs);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << same;
    EXPECT_TRUE(absl::StrContains(s.message(), "--buffer's file")) << s;
  }
  EXPECT_TRUE(
      CheckOutputPaths({{"--out", dir + "/policy.plpolicy"}}, inputs).ok());
  const absl::Status twice = CheckOutputPaths(
      {{"--out", dir + "/a.json"}, {"--crossfit-out", dir + "/./a.json"}});
  EXPECT_TRUE(absl::IsInvalidArgument(twice));
  EXPECT_TRUE(absl::StrContains(twice.message(), "name the same file"))
      << twice;
}

}  // namespace
}  // namespace phaseloop::files
