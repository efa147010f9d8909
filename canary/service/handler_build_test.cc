// The handler build's pure parts and its input checks; the build itself
// (a nested Bazel through the phaseloop toolchain) runs in
// //tests:canary_service_test.
#include "canary/service/handler_build.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

TEST(FillTemplateTest, ReplacesEveryPlaceholder) {
  auto filled = FillTemplate("path = \"@SHIMS@/a\", \"@SHIMS@/b\", @ZLIB@",
                             {{"SHIMS", "/s"}, {"ZLIB", "/z"}});
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_EQ(*filled, "path = \"/s/a\", \"/s/b\", /z");
}

TEST(FillTemplateTest, NamesAPlaceholderWithoutValue) {
  auto filled = FillTemplate("a @SHIMS@ b @PLATFORMS@", {{"SHIMS", "/s"}});
  ASSERT_FALSE(filled.ok());
  EXPECT_TRUE(absl::StrContains(filled.status().message(), "@PLATFORMS@"))
      << filled.status();
  // An e-mail-like '@' is not a placeholder.
  EXPECT_TRUE(FillTemplate("mail a@b.c", {}).ok());
}

class HandlerBuildInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    options_.work_dir = dir_ + "/work";
    options_.workspace_template = dir_ + "/template";
    options_.zlib_source_dir = dir_ + "/zlib";
    options_.policy_file = dir_ + "/policy";
    std::filesystem::create_directories(options_.workspace_template);
    std::filesystem::create_directories(options_.zlib_source_dir);
    for (const char* file : {"WORKSPACE.in", "BUILD.in", "zlib.BUILD",
                             "handler.c", "phaseloop_handler.h"}) {
      std::ofstream(options_.workspace_template + "/" + file) << "\n";
    }
    for (const char* file : {"zlib.h", "deflate.c"}) {
      std::ofstream(options_.zlib_source_dir + "/" + file) << "\n";
    }
    std::ofstream(options_.policy_file) << "baseline\n";
  }
  std::string Error() {
    auto built = BuildHandler(options_);
    EXPECT_FALSE(built.ok());
    return std::string(built.status().message());
  }
  std::string dir_;
  HandlerBuildOptions options_;
};

TEST_F(HandlerBuildInputsTest, NamesEachMissingInputAndItsFix) {
  options_.phaseloop_cc = dir_ + "/phaseloop-cc";
  EXPECT_TRUE(absl::StrContains(Error(), "phaseloop-cc '" + dir_)) << Error();

  options_.zlib_source_dir = dir_ + "/nozlib";
  EXPECT_TRUE(absl::StrContains(Error(), "tools/fetch_sources.sh zlib"))
      << Error();
  options_.zlib_source_dir = dir_ + "/zlib";

  options_.artifact_file = dir_ + "/policy";
  EXPECT_TRUE(absl::StrContains(Error(), "exactly one of")) << Error();
  options_.artifact_file = "";

  std::filesystem::remove(options_.workspace_template + "/BUILD.in");
  EXPECT_TRUE(absl::StrContains(Error(), "has no BUILD.in")) << Error();
}

}  // namespace
}  // namespace phaseloop::canary
