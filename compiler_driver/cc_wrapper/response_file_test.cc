#include "compiler_driver/cc_wrapper/response_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

using Args = std::vector<std::string>;

class ResponseFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }

  // Writes `content` to dir_/name and returns the path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << content;
    return path;
  }

  std::string dir_;
};

TEST(TokenizeGnuCommandLineTest, Whitespace) {
  EXPECT_EQ(TokenizeGnuCommandLine("  -c\t-O2\r\n a.c\n\n"),
            (Args{"-c", "-O2", "a.c"}));
  EXPECT_EQ(TokenizeGnuCommandLine(""), Args{});
  EXPECT_EQ(TokenizeGnuCommandLine(" \n\t "), Args{});
}

TEST(TokenizeGnuCommandLineTest, Quotes) {
  EXPECT_EQ(TokenizeGnuCommandLine("-DA='x y' \"-DB=a b\""),
            (Args{"-DA=x y", "-DB=a b"}));
  // Adjacent quoted and plain parts join; quotes of the other kind are
  // literal inside.
  EXPECT_EQ(TokenizeGnuCommandLine("'it'\"'\"'s' \"say \\\"hi\\\"\""),
            (Args{"it's", "say \"hi\""}));
  // Empty quoted tokens are dropped, as LLVM does.
  EXPECT_EQ(TokenizeGnuCommandLine("'' \"\" -c"), Args{"-c"});
  // An unterminated quote runs to the end.
  EXPECT_EQ(TokenizeGnuCommandLine("-c '-DY=a b"), (Args{"-c", "-DY=a b"}));
}

TEST(TokenizeGnuCommandLineTest, Backslashes) {
  EXPECT_EQ(TokenizeGnuCommandLine("a\\ b c\\\\d"), (Args{"a b", "c\\d"}));
  // Inside single quotes too (unlike a POSIX shell).
  EXPECT_EQ(TokenizeGnuCommandLine("'a\\'b'"), Args{"a'b"});
  // A final backslash is kept.
  EXPECT_EQ(TokenizeGnuCommandLine("a\\"), Args{"a\\"});
  EXPECT_EQ(TokenizeGnuCommandLine("\"x\\"), Args{"x\\"});
  // "#" starts no comment.
  EXPECT_EQ(TokenizeGnuCommandLine("-c # x"), (Args{"-c", "#", "x"}));
}

TEST_F(ResponseFileTest, NoResponseFilesIsIdentity) {
  std::string error;
  const Args args = {"-c", "a.c", "@", "-o", "a.o"};
  EXPECT_EQ(ExpandResponseFiles(args, &error), args);
}

TEST_F(ResponseFileTest, ExpandsInPlace) {
  const std::string rsp = Write("a.rsp", "-O2 -DX='1 2'\n-Iinc\n");
  std::string error;
  std::optional<Args> expanded =
      ExpandResponseFiles({"-c", "@" + rsp, "a.c"}, &error);
  ASSERT_TRUE(expanded) << error;
  EXPECT_EQ(*expanded, (Args{"-c", "-O2", "-DX=1 2", "-Iinc", "a.c"}));
}

TEST_F(ResponseFileTest, NestedAbsolutePath) {
  const std::string inner = Write("inner.rsp", "-DINNER");
  const std::string outer = Write("outer.rsp", "-DOUTER @" + inner + " -c");
  std::string error;
  std::optional<Args> expanded = ExpandResponseFiles({"@" + outer}, &error);
  ASSERT_TRUE(expanded) << error;
  EXPECT_EQ(*expanded, (Args{"-DOUTER", "-DINNER", "-c"}));
}

// clang-16 resolves a nested relative @file against the working directory,
// not against the including file's directory.
TEST_F(ResponseFileTest, NestedRelativePathIsRelativeToWorkingDirectory) {
  ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0755), 0);
  Write("sub/outer.rsp", "-DOUTER @inner.rsp");
  Write("sub/inner.rsp", "-DWRONG");
  Write("inner.rsp", "-DRIGHT");
  char previous[4096];
  ASSERT_NE(getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  std::string error;
  std::optional<Args> expanded =
      ExpandResponseFiles({"@sub/outer.rsp"}, &error);
  ASSERT_EQ(chdir(previous), 0);
  ASSERT_TRUE(expanded) << error;
  EXPECT_EQ(*expanded, (Args{"-DOUTER", "-DRIGHT"}));
}

TEST_F(ResponseFileTest, Utf8ByteOrderMarkIsSkipped) {
  const std::string rsp = Write("bom.rsp", "\xEF\xBB\xBF-DB=1");
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"@" + rsp}, &error), Args{"-DB=1"});
}

TEST_F(ResponseFileTest, EmptyFileExpandsToNothing) {
  const std::string rsp = Write("empty.rsp", "");
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"-c", "@" + rsp}, &error), Args{"-c"});
}

TEST_F(ResponseFileTest, MissingFileIsAnError) {
  std::string error;
  const std::string missing = dir_ + "/missing.rsp";
  EXPECT_EQ(ExpandResponseFiles({"-c", "@" + missing}, &error), std::nullopt);
  EXPECT_NE(error.find(missing), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST_F(ResponseFileTest, MissingNestedFileIsAnError) {
  const std::string outer = Write("outer.rsp", "@" + dir_ + "/nope.rsp");
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"@" + outer}, &error), std::nullopt);
  EXPECT_NE(error.find("nope.rsp"), std::string::npos) << error;
}

TEST_F(ResponseFileTest, DirectoryIsAnError) {
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"@" + dir_}, &error), std::nullopt);
  EXPECT_NE(error.find(dir_), std::string::npos) << error;
}

TEST_F(ResponseFileTest, SelfInclusionStopsAtTheDepthLimit) {
  const std::string path = dir_ + "/loop.rsp";
  Write("loop.rsp", "-c @" + path);
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"@" + path}, &error), std::nullopt);
  EXPECT_NE(error.find("nested"), std::string::npos) << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST_F(ResponseFileTest, Utf16IsAnError) {
  const std::string rsp = Write("wide.rsp", std::string("\xFF\xFE-\0c\0", 6));
  std::string error;
  EXPECT_EQ(ExpandResponseFiles({"@" + rsp}, &error), std::nullopt);
  EXPECT_NE(error.find("UTF-16"), std::string::npos) << error;
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
