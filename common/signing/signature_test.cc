#include "common/signing/signature.h"

#include "common/signing/test_keys.h"
#include "gtest/gtest.h"

namespace phaseloop::signing {
namespace {

using testing::TestKey;
using testing::TrustOf;

const std::string kArtifact = "phaseloop-policy\nformat_version 1\n...bytes";

TEST(SignatureTest, GoodSignatureIsAcceptedAndNamesItsKey) {
  const std::string sig = SignArtifact(kArtifact, TestKey(1));
  absl::StatusOr<std::string> key_id =
      VerifyArtifact(kArtifact, sig, TrustOf({TestKey(1)}), "a.plpolicy");
  ASSERT_TRUE(key_id.ok()) << key_id.status();
  EXPECT_EQ(*key_id, TestKey(1).key_id);
  EXPECT_EQ(SignArtifact(kArtifact, TestKey(1)), sig);  // deterministic
  EXPECT_EQ(*SignatureKeyId(sig, "a"), TestKey(1).key_id);
}

TEST(SignatureTest, RotationAcceptsEveryTrustedKeyAndNotARemovedOne) {
  const TrustedKeys both = TrustOf({TestKey(1), TestKey(2)});
  EXPECT_TRUE(
      VerifyArtifact(kArtifact, SignArtifact(kArtifact, TestKey(1)), both, "a")
          .ok());
  EXPECT_TRUE(
      VerifyArtifact(kArtifact, SignArtifact(kArtifact, TestKey(2)), both, "a")
          .ok());
  // Key 1 removed from the trust file.
  absl::StatusOr<std::string> removed =
      VerifyArtifact(kArtifact, SignArtifact(kArtifact, TestKey(1)),
                     TrustOf({TestKey(2)}), "a");
  EXPECT_EQ(SignatureRefusalReason(removed.status()), kReasonUntrusted);
}

TEST(SignatureTest, TamperedArtifactIsRefused) {
  const std::string sig = SignArtifact(kArtifact, TestKey(1));
  std::string tampered = kArtifact;
  tampered.back() ^= 1;
  absl::StatusOr<std::string> result =
      VerifyArtifact(tampered, sig, TrustOf({TestKey(1)}), "a.plpolicy");
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(result.status()));
  EXPECT_EQ(SignatureRefusalReason(result.status()), kReasonUntrusted);
  EXPECT_NE(result.status().message().find("does not match its bytes"),
            std::string::npos)
      << result.status();
  // Truncated.
  EXPECT_FALSE(
      VerifyArtifact(kArtifact.substr(0, 10), sig, TrustOf({TestKey(1)}), "a")
          .ok());
}

TEST(SignatureTest, WrongKeyIsRefusedNamingTheKeys) {
  absl::StatusOr<std::string> result =
      VerifyArtifact(kArtifact, SignArtifact(kArtifact, TestKey(2)),
                     TrustOf({TestKey(1)}, "/etc/phaseloop/trust"), "a");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(SignatureRefusalReason(result.status()), kReasonUntrusted);
  EXPECT_NE(result.status().message().find(TestKey(2).key_id),
            std::string::npos);
  EXPECT_NE(result.status().message().find("/etc/phaseloop/trust"),
            std::string::npos);
}

TEST(SignatureTest, ASignatureWhoseKeyIdWasSwappedDoesNotVerify) {
  // Signed by key 2, but claiming trusted key 1.
  std::string sig = SignArtifact(kArtifact, TestKey(2));
  const size_t at = sig.find(TestKey(2).key_id);
  sig.replace(at, 16, TestKey(1).key_id);
  EXPECT_EQ(
      SignatureRefusalReason(
          VerifyArtifact(kArtifact, sig, TrustOf({TestKey(1), TestKey(2)}), "a")
              .status()),
      kReasonUntrusted);
}

TEST(SignatureTest, MissingSignatureIsCountedApart) {
  absl::StatusOr<std::string> result =
      VerifyArtifact(kArtifact, "", TrustOf({TestKey(1)}), "a.plpolicy");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(SignatureRefusalReason(result.status()), kReasonUnsigned);
  EXPECT_NE(result.status().message().find("a.plpolicy is not signed"),
            std::string::npos);
}

TEST(SignatureTest, MalformedSignatureIsRefused) {
  const std::string sig = SignArtifact(kArtifact, TestKey(1));
  for (const std::string& bad :
       {std::string("garbage\n"), sig.substr(0, sig.size() - 30),
        sig.substr(0, sig.find("ed25519ph"))}) {
    absl::StatusOr<std::string> result =
        VerifyArtifact(kArtifact, bad, TrustOf({TestKey(1)}), "a");
    EXPECT_EQ(SignatureRefusalReason(result.status()), kReasonUntrusted) << bad;
  }
}

TEST(SignatureTest, Sha256HexIsWhatSha256sumPrints) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(SignatureTest, OtherErrorsAreNoRefusal) {
  EXPECT_EQ(SignatureRefusalReason(absl::NotFoundError("x")), "");
  EXPECT_EQ(SignatureRefusalReason(absl::PermissionDeniedError("x")), "");
}

}  // namespace
}  // namespace phaseloop::signing
