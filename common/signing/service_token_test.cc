#include "common/signing/service_token.h"

#include "common/files/atomic_file.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::signing {
namespace {

std::string WriteToken(const std::string& text) {
  const std::string path = ::phaseloop::testing::MakeTempDir() + "/token";
  EXPECT_TRUE(files::WriteFileAtomically(path, text, 0600).ok());
  return path;
}

TEST(ServiceTokenTest, ReadsOneLine) {
  absl::StatusOr<std::string> token =
      ReadTokenFile(WriteToken("abcdefghijklmnopqrstuvwxyz012345\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "abcdefghijklmnopqrstuvwxyz012345");
}

TEST(ServiceTokenTest, RefusesBadTokenFilesNamingThem) {
  for (const std::string& text :
       {std::string(""), std::string("\n"), std::string("short\n"),
        std::string("abcdefghijklmnop qrstuvwxyz\n"),
        std::string("abcdefghijklmnopqrstuvwxyz\nsecond\n")}) {
    const std::string path = WriteToken(text);
    absl::StatusOr<std::string> token = ReadTokenFile(path);
    ASSERT_FALSE(token.ok()) << text;
    EXPECT_NE(token.status().message().find(path), std::string::npos);
  }
  EXPECT_FALSE(ReadTokenFile("/nonexistent/token").ok());
}

TEST(ServiceTokenTest, Compares) {
  EXPECT_TRUE(TokensEqual("abcdefghijklmnopq", "abcdefghijklmnopq"));
  EXPECT_FALSE(TokensEqual("abcdefghijklmnopq", "abcdefghijklmnopr"));
  EXPECT_FALSE(TokensEqual("abc", "abcd"));
}

}  // namespace
}  // namespace phaseloop::signing
