#include "common/signing/keys.h"

#include <sys/stat.h>

#include "common/signing/trust_file.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::signing {
namespace {

using ::phaseloop::testing::MakeTempDir;
using ::phaseloop::testing::ReadFileOrEmpty;

TEST(KeysTest, KeygenWritesASecretKeyOnlyItsOwnerReadsAndATrustFile) {
  const std::string dir = MakeTempDir() + "/keys";
  absl::StatusOr<SigningKey> key = WriteNewKeyPair(dir, "ci-2026");
  ASSERT_TRUE(key.ok()) << key.status();
  struct stat info;
  ASSERT_EQ(stat((dir + "/policy-signing.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);

  absl::StatusOr<SigningKey> read =
      ReadSigningKeyFile(dir + "/policy-signing.key");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->key_id, key->key_id);
  EXPECT_EQ(read->public_key, key->public_key);

  // The .pub is a trust file naming exactly this key.
  absl::StatusOr<TrustedKeys> trust =
      TrustedKeys::Read(dir + "/policy-signing.pub");
  ASSERT_TRUE(trust.ok()) << trust.status();
  ASSERT_EQ(trust->size(), 1u);
  ASSERT_NE(trust->Find(key->key_id), nullptr);
  EXPECT_NE(ReadFileOrEmpty(dir + "/policy-signing.pub").find("ci-2026"),
            std::string::npos);
}

TEST(KeysTest, KeygenNeverOverwritesAKey) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteNewKeyPair(dir, "").ok());
  const std::string before = ReadFileOrEmpty(dir + "/policy-signing.key");
  absl::StatusOr<SigningKey> again = WriteNewKeyPair(dir, "");
  EXPECT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  EXPECT_NE(again.status().message().find("never overwritten"),
            std::string::npos);
  EXPECT_EQ(ReadFileOrEmpty(dir + "/policy-signing.key"), before);
}

TEST(KeysTest, TwoKeysDiffer) {
  absl::StatusOr<SigningKey> a = GenerateSigningKey();
  absl::StatusOr<SigningKey> b = GenerateSigningKey();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->key_id, b->key_id);
  EXPECT_EQ(a->key_id.size(), 16u);
}

TEST(KeysTest, TruncatedKeyFileIsRefusedNamingTheFileAndLine) {
  std::array<uint8_t, 32> seed;
  seed.fill(7);
  const std::string text = SecretKeyFileText(SigningKeyFromSeed(seed));
  // Cut in the middle of the seed.
  absl::StatusOr<SigningKey> cut = ParseSigningKey(
      text.substr(0, text.size() - 20), "/k/policy-signing.key");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("/k/policy-signing.key' line 4"),
            std::string::npos)
      << cut.status();
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos);
  // Cut before the seed line.
  absl::StatusOr<SigningKey> no_seed =
      ParseSigningKey(text.substr(0, text.find("seed")), "k");
  ASSERT_FALSE(no_seed.ok());
  EXPECT_NE(no_seed.status().message().find("no seed line"), std::string::npos);
  // Empty.
  EXPECT_FALSE(ParseSigningKey("", "k").ok());
}

TEST(KeysTest, ASeedThatDoesNotMatchItsKeyIdIsRefused) {
  std::array<uint8_t, 32> seed;
  seed.fill(7);
  std::string text = SecretKeyFileText(SigningKeyFromSeed(seed));
  const size_t at = text.find("seed ") + 5;
  text[at] = text[at] == 'a' ? 'b' : 'a';
  absl::StatusOr<SigningKey> key = ParseSigningKey(text, "k");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("damaged"), std::string::npos)
      << key.status();
}

TEST(KeysTest, APublicKeyFileIsNotASecretKey) {
  std::array<uint8_t, 32> seed;
  seed.fill(1);
  absl::StatusOr<SigningKey> key =
      ParseSigningKey(PublicKeyFileText(SigningKeyFromSeed(seed), ""), "p");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("public key"), std::string::npos);
}

TEST(KeysTest, MissingKeyFileNamesIt) {
  absl::StatusOr<SigningKey> key = ReadSigningKeyFile("/nonexistent/x.key");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("/nonexistent/x.key"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::signing
