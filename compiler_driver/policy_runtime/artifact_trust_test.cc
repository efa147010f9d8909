#include "compiler_driver/policy_runtime/artifact_trust.h"

#include "absl/strings/match.h"
#include "common/files/atomic_file.h"
#include "common/signing/signature.h"
#include "common/signing/test_keys.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::policy_runtime {
namespace {

using signing::SignatureRefusalReason;
using signing::testing::TestKey;

class ArtifactTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    artifact_ = dir_ + "/p.plpolicy";
    trust_ = dir_ + "/trust";
    ASSERT_TRUE(files::WriteFileAtomically(artifact_, kBytes).ok());
    signing::testing::WriteTrustFile(trust_, {TestKey(1), TestKey(2)});
  }
  void Sign(const signing::SigningKey& key, const std::string& bytes = kBytes) {
    ASSERT_TRUE(files::WriteFileAtomically(signing::SignaturePathFor(artifact_),
                                           signing::SignArtifact(bytes, key))
                    .ok());
  }

  static constexpr char kBytes[] = "phaseloop-policy\nformat_version 1\nxyz";
  std::string dir_, artifact_, trust_;
};

TEST_F(ArtifactTrustTest, NoTrustFileAcceptsEverything) {
  EXPECT_TRUE(CheckArtifactTrust(kBytes, artifact_, "").ok());
}

TEST_F(ArtifactTrustTest, SignedByATrustedKeyRuns) {
  Sign(TestKey(2));
  EXPECT_TRUE(CheckArtifactTrust(kBytes, artifact_, trust_).ok());
}

TEST_F(ArtifactTrustTest, UnsignedIsRefusedAsUnsigned) {
  absl::Status status = CheckArtifactTrust(kBytes, artifact_, trust_);
  EXPECT_EQ(SignatureRefusalReason(status), signing::kReasonUnsigned);
  EXPECT_TRUE(absl::StrContains(status.message(), artifact_)) << status;
}

TEST_F(ArtifactTrustTest, WrongKeyAndTamperingAreRefusedAsUntrusted) {
  Sign(TestKey(3));
  absl::Status wrong = CheckArtifactTrust(kBytes, artifact_, trust_);
  EXPECT_EQ(SignatureRefusalReason(wrong), signing::kReasonUntrusted);
  EXPECT_TRUE(absl::StrContains(wrong.message(), TestKey(3).key_id));
  Sign(TestKey(1), "other bytes");
  EXPECT_EQ(
      SignatureRefusalReason(CheckArtifactTrust(kBytes, artifact_, trust_)),
      signing::kReasonUntrusted);
}

TEST_F(ArtifactTrustTest, AMalformedOrMissingTrustFileTrustsNothing) {
  Sign(TestKey(1));
  ASSERT_TRUE(
      files::WriteFileAtomically(trust_, "phaseloop-trust v1\nbad line\n")
          .ok());
  absl::Status status = CheckArtifactTrust(kBytes, artifact_, trust_);
  EXPECT_EQ(SignatureRefusalReason(status), signing::kReasonUntrusted);
  EXPECT_TRUE(absl::StrContains(status.message(), trust_ + "' line 2"))
      << status;
  EXPECT_EQ(SignatureRefusalReason(
                CheckArtifactTrust(kBytes, artifact_, dir_ + "/missing")),
            signing::kReasonUntrusted);
}

TEST_F(ArtifactTrustTest, TheShippedDefaultPolicyIsTrustedByContent) {
  const std::string shipped =
      phaseloop::testing::ReadFileOrEmpty("configs/policies/default.plpolicy");
  ASSERT_FALSE(shipped.empty());
  EXPECT_TRUE(IsShippedDefaultPolicy(shipped));
  const std::string copy = dir_ + "/default.plpolicy";
  ASSERT_TRUE(files::WriteFileAtomically(copy, shipped).ok());
  EXPECT_TRUE(CheckArtifactTrust(shipped, copy, trust_).ok());
  // One byte changed: no longer the shipped file, and unsigned.
  std::string changed = shipped;
  changed[changed.size() / 2] ^= 1;
  EXPECT_FALSE(IsShippedDefaultPolicy(changed));
  EXPECT_EQ(SignatureRefusalReason(CheckArtifactTrust(changed, copy, trust_)),
            signing::kReasonUnsigned);
}

}  // namespace
}  // namespace phaseloop::policy_runtime
