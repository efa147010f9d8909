#include "common/signing/trust_file.h"

#include "common/signing/test_keys.h"
#include "gtest/gtest.h"

namespace phaseloop::signing {
namespace {

using testing::TestKey;
using testing::TrustFileText;

std::string Error(const std::string& text) {
  absl::StatusOr<TrustedKeys> trust = TrustedKeys::Parse(text, "/etc/trust");
  EXPECT_FALSE(trust.ok());
  return std::string(trust.status().message());
}

TEST(TrustFileTest, SeveralKeysAreTrustedAtOnce) {
  absl::StatusOr<TrustedKeys> trust =
      TrustedKeys::Parse(TrustFileText({TestKey(1), TestKey(2)}), "/etc/trust");
  ASSERT_TRUE(trust.ok()) << trust.status();
  EXPECT_EQ(trust->size(), 2u);
  EXPECT_NE(trust->Find(TestKey(1).key_id), nullptr);
  EXPECT_NE(trust->Find(TestKey(2).key_id), nullptr);
  EXPECT_EQ(trust->Find(TestKey(3).key_id), nullptr);
  EXPECT_EQ(*trust->Find(TestKey(2).key_id), TestKey(2).public_key);
}

TEST(TrustFileTest, MalformedFilesNameTheFileAndLine) {
  const std::string good = TrustFileText({TestKey(1)});
  const std::string line = good.substr(good.find('\n', good.find("v1")) + 1);
  EXPECT_NE(Error("").find("'/etc/trust': the file is empty"),
            std::string::npos);
  EXPECT_NE(Error("phaseloop-trust v2\n").find("line 1: the first line"),
            std::string::npos);
  EXPECT_NE(Error("phaseloop-trust v1\n").find("lists no key"),
            std::string::npos);
  EXPECT_NE(Error("phaseloop-trust v1\n" + line.substr(0, 40) + "\n")
                .find("line 2: the public key must be 64"),
            std::string::npos);
  std::string other_algorithm = line;
  other_algorithm.replace(other_algorithm.find("ed25519"), 7, "rsa4096");
  EXPECT_NE(Error("phaseloop-trust v1\n" + other_algorithm)
                .find("line 2: unknown algorithm 'rsa4096'"),
            std::string::npos);
  std::string wrong_id = line;
  wrong_id[0] = wrong_id[0] == '0' ? '1' : '0';
  EXPECT_NE(Error("phaseloop-trust v1\n" + wrong_id)
                .find("is not the id of its public key"),
            std::string::npos);
  EXPECT_NE(Error("# c\n\nphaseloop-trust v1\n" + line + line)
                .find("line 5: key " + TestKey(1).key_id + " is listed twice"),
            std::string::npos);
  EXPECT_NE(Error("phaseloop-trust v1\njunk\n").find("line 2: expected"),
            std::string::npos);
  EXPECT_NE(Error("phaseloop-signing-key v1\n").find("SECRET"),
            std::string::npos);
}

TEST(TrustFileTest, UnreadableFileIsNamed) {
  absl::StatusOr<TrustedKeys> trust = TrustedKeys::Read("/nonexistent/trust");
  ASSERT_FALSE(trust.ok());
  EXPECT_NE(trust.status().message().find("/nonexistent/trust"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::signing
