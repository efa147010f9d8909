// The directory store with and without a trust file: signatures checked on
// push and on every read, refusals that leave nothing behind, rotation.
#include <filesystem>

#include "absl/strings/match.h"
#include "common/signing/signature.h"
#include "common/signing/test_keys.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "offline_rl/policy_store/directory_policy_store.h"
#include "offline_rl/policy_store/test_policies.h"

namespace phaseloop::policy_store {
namespace {

using policy_store::testing::TinyPolicy;
using policy_store::testing::TinyPolicyFile;
using signing::SignArtifact;
using signing::testing::TestKey;
using signing::testing::TrustOf;

std::unique_ptr<PolicyStore> OpenTrusting(
    const std::string& dir, const std::vector<signing::SigningKey>& keys) {
  StoreOptions options;
  options.trust = std::make_shared<const signing::TrustedKeys>(
      TrustOf(keys, "/etc/phaseloop/trust"));
  absl::StatusOr<std::unique_ptr<PolicyStore>> store =
      OpenPolicyStore(dir, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// Every file under `dir` but the lock.
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename() != ".lock") {
      names.push_back(entry.path().string());
    }
  }
  return names;
}

TEST(PolicyStoreSigningTest, AGoodSignatureIsStoredAndHandedOut) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = OpenTrusting(dir, {TestKey(1)});
  const std::string file = TinyPolicyFile(1);
  const std::string sig = SignArtifact(file, TestKey(1));
  absl::StatusOr<PushResult> pushed = store->Push(file, sig, "stable", "n");
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  absl::StatusOr<FetchedPolicy> fetched = store->GetChannel("stable");
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->artifact_file, file);
  EXPECT_EQ(fetched->signature, sig);
  EXPECT_EQ(store->GetVersion(pushed->policy_version)->signature, sig);
}

TEST(PolicyStoreSigningTest, RefusedPushesWriteNothing) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = OpenTrusting(dir, {TestKey(1)});
  const std::string file = TinyPolicyFile(1);
  std::string tampered = file;
  tampered[tampered.size() - 3] ^= 1;  // still parses? either way refused
  struct Case {
    const char* name;
    std::string artifact, signature, reason;
  };
  const std::vector<Case> cases = {
      {"missing signature", file, "", signing::kReasonUnsigned},
      {"wrong key", file, SignArtifact(file, TestKey(2)),
       signing::kReasonUntrusted},
      {"signature of another artifact", file,
       SignArtifact(TinyPolicyFile(2), TestKey(1)), signing::kReasonUntrusted},
      {"garbage signature", file, "not a signature\n",
       signing::kReasonUntrusted},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PushResult> pushed =
        store->Push(c.artifact, c.signature, "stable", "");
    ASSERT_FALSE(pushed.ok()) << c.name;
    EXPECT_TRUE(absl::IsPermissionDenied(pushed.status())) << pushed.status();
    EXPECT_EQ(signing::SignatureRefusalReason(pushed.status()), c.reason)
        << c.name;
    EXPECT_TRUE(
        absl::StrContains(pushed.status().message(), "the pushed artifact"))
        << pushed.status();
  }
  // A tampered artifact is refused too (its checksum or its signature).
  EXPECT_FALSE(
      store->Push(tampered, SignArtifact(file, TestKey(1)), "", "").ok());
  EXPECT_TRUE(FilesIn(dir).empty()) << FilesIn(dir)[0];
  EXPECT_TRUE(store->List()->policies.empty());
}

TEST(PolicyStoreSigningTest, AKeyRemovedFromTheTrustFileStopsPulls) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  std::string version;
  {
    auto store = OpenTrusting(dir, {TestKey(1), TestKey(2)});
    absl::StatusOr<PushResult> pushed =
        store->Push(TinyPolicyFile(1),
                    SignArtifact(TinyPolicyFile(1), TestKey(1)), "stable", "");
    ASSERT_TRUE(pushed.ok()) << pushed.status();
    version = pushed->policy_version;
  }
  // Rotation, step 2: key 1 is no longer trusted; the listing shows which
  // versions still carry it.
  auto store = OpenTrusting(dir, {TestKey(2)});
  absl::StatusOr<PolicyListing> listed = store->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->policies.size(), 1u);
  EXPECT_EQ(listed->policies[0].signed_by, TestKey(1).key_id);
  absl::StatusOr<FetchedPolicy> refused = store->GetChannel("stable");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(signing::SignatureRefusalReason(refused.status()),
            signing::kReasonUntrusted);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), TestKey(1).key_id));
  // Re-signed with the new key, the stored version is served again.
  ASSERT_TRUE(store
                  ->Push(TinyPolicyFile(1),
                         SignArtifact(TinyPolicyFile(1), TestKey(2)), "", "")
                  .ok());
  absl::StatusOr<FetchedPolicy> fetched = store->GetVersion(version);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(*signing::SignatureKeyId(fetched->signature, "x"),
            TestKey(2).key_id);
  EXPECT_EQ(store->List()->policies[0].signed_by, TestKey(2).key_id);
}

TEST(PolicyStoreSigningTest, AStoreWithoutTrustKeepsSignaturesAsPushed) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = OpenPolicyStore(dir);
  ASSERT_TRUE(store.ok());
  const std::string sig = SignArtifact(TinyPolicyFile(1), TestKey(1));
  ASSERT_TRUE((*store)->Push(TinyPolicyFile(1), sig, "stable", "").ok());
  ASSERT_TRUE((*store)->Push(TinyPolicyFile(2), "candidate", "").ok());
  EXPECT_EQ((*store)->GetChannel("stable")->signature, sig);
  EXPECT_EQ((*store)->GetChannel("candidate")->signature, "");
  absl::StatusOr<PolicyListing> listed = (*store)->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->policies.size(), 2u);
  EXPECT_EQ(listed->policies[0].signed_by, TestKey(1).key_id);
  EXPECT_EQ(listed->policies[1].signed_by, "");  // stored unsigned
  // A push without a signature keeps the stored one.
  ASSERT_TRUE((*store)->Push(TinyPolicyFile(1), "", "").ok());
  EXPECT_EQ((*store)->GetChannel("stable")->signature, sig);
  // Another signature (well formed, but of another artifact: the review's
  // overwrite that broke every trusting pull) is refused, not stored.
  const std::string other = SignArtifact(TinyPolicyFile(2), TestKey(1));
  absl::StatusOr<PushResult> replaced =
      (*store)->Push(TinyPolicyFile(1), other, "", "");
  EXPECT_EQ(replaced.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(replaced.status().message(), "--trust-file"))
      << replaced.status().message();
  EXPECT_EQ((*store)->GetChannel("stable")->signature, sig);
  // The same signature again is fine.
  EXPECT_TRUE((*store)->Push(TinyPolicyFile(1), sig, "", "").ok());
  // A malformed signature is refused even so.
  absl::StatusOr<PushResult> bad =
      (*store)->Push(TinyPolicyFile(3), "junk", "", "");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

TEST(PolicyStoreSigningTest, UnsignedVersionsOfAnOlderStoreAreRefusedOnPull) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  {
    auto plain = OpenPolicyStore(dir);
    ASSERT_TRUE(plain.ok());
    ASSERT_TRUE((*plain)->Push(TinyPolicyFile(1), "stable", "").ok());
  }
  auto store = OpenTrusting(dir, {TestKey(1)});
  EXPECT_EQ(
      signing::SignatureRefusalReason(store->GetChannel("stable").status()),
      signing::kReasonUnsigned);
}

}  // namespace
}  // namespace phaseloop::policy_store
