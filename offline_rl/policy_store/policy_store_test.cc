// The directory-backed PolicyStore: verification on push, idempotence,
// channels with history, persistence, damage detection, and that a writer
// SIGKILLed mid-push leaves a store that opens and verifies.
#include "offline_rl/policy_store/policy_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "offline_rl/policy_store/directory_policy_store.h"
#include "offline_rl/policy_store/test_policies.h"

namespace phaseloop::policy_store {
namespace {

using policy_store::testing::TinyPolicy;
using policy_store::testing::TinyPolicyFile;

std::unique_ptr<PolicyStore> Open(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<PolicyStore>> store = OpenPolicyStore(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

std::string VersionOf(int seed) {
  return policy_runtime::PolicyVersionOf(TinyPolicy(seed));
}

TEST(PolicyStoreTest, PushListAndGetByVersionOrPrefix) {
  auto store = Open(phaseloop::testing::MakeTempDir());
  absl::StatusOr<PushResult> pushed =
      store->Push(TinyPolicyFile(1), "", "first");
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(pushed->policy_version, VersionOf(1));
  EXPECT_FALSE(pushed->already_stored);

  absl::StatusOr<PolicyListing> listing = store->List();
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->policies.size(), 1u);
  const StoredPolicy& policy = listing->policies[0];
  EXPECT_EQ(policy.objective, "text_size");
  EXPECT_EQ(policy.formulation, "candidate");
  EXPECT_EQ(policy.algorithm, "bc");
  EXPECT_EQ(policy.note, "first");
  EXPECT_DOUBLE_EQ(policy.metrics.at("validation_oz_ratio"), 0.97);
  EXPECT_GT(policy.pushed_unix_ms, 0);
  ASSERT_EQ(listing->channels.size(), 2u);
  EXPECT_EQ(listing->channels[0].name, "stable");
  EXPECT_EQ(listing->channels[0].policy_version, "");

  absl::StatusOr<FetchedPolicy> fetched = store->GetVersion(VersionOf(1));
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->artifact_file, TinyPolicyFile(1));
  absl::StatusOr<FetchedPolicy> by_prefix =
      store->GetVersion(VersionOf(1).substr(0, 8));
  ASSERT_TRUE(by_prefix.ok()) << by_prefix.status();
  EXPECT_EQ(by_prefix->policy_version, VersionOf(1));
}

TEST(PolicyStoreTest, PushingTheSameArtifactTwiceIsANoOp) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = Open(dir);
  ASSERT_TRUE(store->Push(TinyPolicyFile(1), "candidate", "a").ok());
  const std::string index =
      phaseloop::testing::ReadFileOrEmpty(dir + "/index.json");
  absl::StatusOr<PushResult> again =
      store->Push(TinyPolicyFile(1), "candidate", "b");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_stored);
  EXPECT_EQ(again->policy_version, VersionOf(1));
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(dir + "/index.json"), index);
  EXPECT_EQ(store->List()->policies.size(), 1u);
  EXPECT_TRUE(store->List()->channels[1].previous_versions.empty());
}

TEST(PolicyStoreTest, RefusesTamperedTruncatedAndUnknownFormatArtifacts) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = Open(dir);
  std::string tampered = TinyPolicyFile(1);
  tampered[tampered.size() - 5] ^= 0x20;
  const std::string truncated = TinyPolicyFile(1).substr(0, 200);
  const std::string future = absl::StrReplaceAll(
      TinyPolicyFile(1), {{"format_version 1\n", "format_version 7\n"}});
  struct Case {
    std::string bytes;
    std::string problem;
  };
  for (const Case& c :
       {Case{tampered, "checksum"}, Case{truncated, "truncated"},
        Case{future, "format version 7"},
        Case{"hello", "not a policy artifact"}}) {
    absl::StatusOr<PushResult> pushed = store->Push(c.bytes, "stable", "");
    ASSERT_FALSE(pushed.ok()) << c.problem;
    EXPECT_EQ(pushed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(pushed.status().message(), c.problem))
        << pushed.status();
  }
  EXPECT_TRUE(store->List()->policies.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/artifacts"));
}

TEST(PolicyStoreTest, PromoteAndRollbackWalkTheChannelHistory) {
  auto store = Open(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store->Push(TinyPolicyFile(1), "stable", "").ok());
  ASSERT_TRUE(store->Push(TinyPolicyFile(2), "candidate", "").ok());
  ASSERT_TRUE(store->Push(TinyPolicyFile(3), "", "").ok());
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
  EXPECT_EQ(store->GetChannel("candidate")->policy_version, VersionOf(2));

  absl::StatusOr<ChannelChange> promoted =
      store->Promote(VersionOf(2), "stable");
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  EXPECT_EQ(promoted->previous_version, VersionOf(1));
  ASSERT_TRUE(store->Promote(VersionOf(3), "stable").ok());
  // Promoting the current version again adds no history.
  ASSERT_TRUE(store->Promote(VersionOf(3), "stable").ok());
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(3));
  std::vector<std::string> expected_history = {VersionOf(2), VersionOf(1)};
  EXPECT_EQ(store->List()->channels[0].previous_versions, expected_history);
  std::vector<std::string> channels = {"candidate"};
  EXPECT_EQ(store->List()->policies[1].channels, channels);

  absl::StatusOr<ChannelChange> back = store->Rollback("stable");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->previous_version, VersionOf(3));
  EXPECT_EQ(back->policy_version, VersionOf(2));
  ASSERT_TRUE(store->Rollback("stable").ok());
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
  absl::StatusOr<ChannelChange> none = store->Rollback("stable");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
}

TEST(PolicyStoreTest, UnknownNamesAreNotFoundAndMalformedOnesInvalid) {
  auto store = Open(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store->Push(TinyPolicyFile(1), "", "").ok());
  EXPECT_EQ(store->GetChannel("nightly").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(store->GetChannel("nightly").status().message(),
                                "stable, candidate"));
  EXPECT_EQ(store->GetChannel("stable").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Promote(VersionOf(1), "nightly").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Push(TinyPolicyFile(2), "nightly", "").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->GetVersion(VersionOf(2)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Promote(VersionOf(2), "stable").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->GetVersion("xyz").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Rollback("stable").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PolicyStoreTest, StatePersistsAndTheDirectoryHasOneOwner) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  {
    auto store = Open(dir);
    ASSERT_TRUE(store->Push(TinyPolicyFile(1), "stable", "").ok());
    ASSERT_TRUE(store->Push(TinyPolicyFile(2), "stable", "").ok());
    absl::StatusOr<std::unique_ptr<PolicyStore>> second = OpenPolicyStore(dir);
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  }
  auto store = Open(dir);
  EXPECT_EQ(store->List()->policies.size(), 2u);
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(2));
  ASSERT_TRUE(store->Rollback("stable").ok());
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
}

TEST(PolicyStoreTest, DamagedFilesAreReportedNotServed) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  {
    auto store = Open(dir);
    ASSERT_TRUE(store->Push(TinyPolicyFile(1), "stable", "").ok());
    const std::string path = dir + "/artifacts/" + VersionOf(1) + ".plpolicy";
    std::string bytes = phaseloop::testing::ReadFileOrEmpty(path);
    bytes[bytes.size() - 3] ^= 1;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_EQ(store->GetChannel("stable").status().code(),
              absl::StatusCode::kDataLoss);
    // Pushing the artifact again repairs it.
    ASSERT_TRUE(store->Push(TinyPolicyFile(1), "", "").ok());
    EXPECT_TRUE(store->GetChannel("stable").ok());
  }
  std::ofstream(dir + "/index.json", std::ios::trunc) << "{\"format\": ";
  absl::StatusOr<std::unique_ptr<PolicyStore>> damaged = OpenPolicyStore(dir);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(damaged.status().message(), "index.json"));
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(dir + "/index.json"),
            "{\"format\": ");
}

TEST(PolicyStoreTest, AVersionMarkedFailedIsRefusedForStableUnlessForced) {
  auto store = Open(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store->Push(TinyPolicyFile(1), "stable", "").ok());
  ASSERT_TRUE(store->Push(TinyPolicyFile(2), "candidate", "").ok());
  absl::StatusOr<VersionMark> mark = store->MarkVersion(
      VersionOf(2).substr(0, 8), kVerdictFailed, "p95 +12 % at step 5 %");
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(mark->policy_version, VersionOf(2));
  EXPECT_EQ(mark->verdict.verdict, "failed");
  EXPECT_GT(mark->verdict.marked_unix_ms, 0);
  EXPECT_TRUE(mark->previous.verdict.empty());

  absl::StatusOr<ChannelChange> refused =
      store->Promote(VersionOf(2), "stable");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  for (const std::string& part :
       {VersionOf(2), std::string("p95 +12 % at step 5 %"),
        std::string("--force"), std::string("--verdict cleared")}) {
    EXPECT_TRUE(absl::StrContains(refused.status().message(), part))
        << refused.status().message() << " lacks " << part;
  }
  EXPECT_EQ(store->Push(TinyPolicyFile(2), "stable", "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
  // Only stable is guarded; the channels did not move.
  EXPECT_TRUE(store->Promote(VersionOf(2), "candidate").ok());

  absl::StatusOr<ChannelChange> forced =
      store->Promote(VersionOf(2), "stable", /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(2));
  EXPECT_EQ(store->List()->policies[1].verdict.verdict, "failed");
  ASSERT_TRUE(store->Rollback("stable").ok());
  // Nor does a rollback bring a failed version back to stable: with stable
  // at V1 after V2 (marked failed), rolling back would point it at V2.
  ASSERT_TRUE(store->Promote(VersionOf(2), "stable", /*force=*/true).ok());
  ASSERT_TRUE(store->Promote(VersionOf(1), "stable").ok());
  absl::StatusOr<ChannelChange> back = store->Rollback("stable");
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(back.status().message(), "marked failed"))
      << back.status().message();
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));

  absl::StatusOr<VersionMark> cleared =
      store->MarkVersion(VersionOf(2), kVerdictCleared, "judge bug #12");
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(cleared->previous.verdict, "failed");
  EXPECT_EQ(cleared->previous.reason, "p95 +12 % at step 5 %");
  EXPECT_TRUE(store->Promote(VersionOf(2), "stable").ok());
}

TEST(PolicyStoreTest, MarkChecksItsInput) {
  auto store = Open(phaseloop::testing::MakeTempDir());
  ASSERT_TRUE(store->Push(TinyPolicyFile(1), "", "").ok());
  EXPECT_EQ(store->MarkVersion(VersionOf(1), "promoted", "x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      store->MarkVersion(VersionOf(1), kVerdictFailed, "").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store
                ->MarkVersion(VersionOf(1), kVerdictFailed,
                              std::string(kMaxVerdictReasonBytes + 1, 'x'))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      store->MarkVersion(VersionOf(2), kVerdictFailed, "x").status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_TRUE(store->List()->policies[0].verdict.verdict.empty());
}

// Verdicts survive a reopen; the index names format v2 only once it holds
// one, so a phaseloop that knows no verdicts refuses it rather than drop
// them.
TEST(PolicyStoreTest, VerdictsPersistInANewerIndexFormat) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  {
    auto store = Open(dir);
    ASSERT_TRUE(store->Push(TinyPolicyFile(1), "stable", "").ok());
    EXPECT_TRUE(absl::StrContains(
        phaseloop::testing::ReadFileOrEmpty(dir + "/index.json"),
        "\"phaseloop-policy-store/v1\""));
    ASSERT_TRUE(store->MarkVersion(VersionOf(1), kVerdictFailed, "slow").ok());
  }
  const std::string index =
      phaseloop::testing::ReadFileOrEmpty(dir + "/index.json");
  EXPECT_TRUE(absl::StrContains(index, "\"phaseloop-policy-store/v2\""));
  auto store = Open(dir);
  const StoredPolicy policy = store->List()->policies.at(0);
  EXPECT_EQ(policy.verdict.verdict, "failed");
  EXPECT_EQ(policy.verdict.reason, "slow");
}

// An index.json as the phaseloop before verdicts wrote it opens, shows no
// verdicts and takes one.
TEST(PolicyStoreTest, OpensAnIndexWrittenBeforeVerdicts) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  {
    auto store = Open(dir);
    ASSERT_TRUE(store->Push(TinyPolicyFile(1), "", "").ok());
  }
  std::ofstream(dir + "/index.json", std::ios::trunc)
      << R"({"format": "phaseloop-policy-store/v1",
  "policies": [{"policy_version": ")"
      << VersionOf(1) << R"(", "objective": "size", "formulation": "candidate",
    "algorithm": "bc", "metrics": {"alloc_size_oz_ratio": 1.01},
    "parent_version": "", "note": "old", "pushed_unix_ms": 1700000000000,
    "size_bytes": 1234}],
  "channels": {"stable": {"policy_version": ")"
      << VersionOf(1) << R"(", "updated_unix_ms": 1700000000000,
    "previous_versions": []}}})";
  auto store = Open(dir);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<PolicyListing> listing = store->List();
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->policies.size(), 1u);
  EXPECT_EQ(listing->policies[0].note, "old");
  EXPECT_TRUE(listing->policies[0].verdict.verdict.empty());
  EXPECT_EQ(store->GetChannel("stable")->policy_version, VersionOf(1));
  ASSERT_TRUE(store->MarkVersion(VersionOf(1), kVerdictFailed, "slow").ok());
  EXPECT_EQ(store->List()->policies[0].verdict.verdict, "failed");
}

// Children push new versions (and promote them) until SIGKILLed at a
// varying moment; every store they leave must open, verify and take pushes.
TEST(PolicyStoreTest, SurvivesAWriterKilledMidPush) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  for (int round = 0; round < 12; ++round) {
    // The writer says each push it finished; the kill comes a varying time
    // after its first, so every round gets work done however slow the
    // machine (under ASan and load, a fixed sleep let writers push nothing).
    int pushed[2];
    ASSERT_EQ(pipe(pushed), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pushed[0]);
      absl::StatusOr<std::unique_ptr<PolicyStore>> store = OpenPolicyStore(dir);
      if (!store.ok()) _exit(3);
      for (int seed = round * 1000;; ++seed) {
        if (!(*store)->Push(TinyPolicyFile(seed), "candidate", "").ok())
          _exit(4);
        if (write(pushed[1], "p", 1) != 1) _exit(5);
        if (seed % 3 == 0) (*store)->Rollback("candidate").IgnoreError();
      }
    }
    close(pushed[1]);
    char byte = 0;
    ASSERT_EQ(read(pushed[0], &byte, 1), 1) << "the writer pushed nothing";
    usleep((7919 * round) % 90000);
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(pushed[0]);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "writer exited with " << WEXITSTATUS(status);

    auto store = Open(dir);
    ASSERT_NE(store, nullptr);
    absl::StatusOr<PolicyListing> listing = store->List();
    ASSERT_TRUE(listing.ok());
    for (const StoredPolicy& policy : listing->policies) {
      ASSERT_TRUE(store->GetVersion(policy.policy_version).ok())
          << policy.policy_version;
    }
    if (!listing->channels[1].policy_version.empty()) {
      ASSERT_TRUE(store->GetChannel("candidate").ok());
    }
    for (const auto& entry :
         std::filesystem::directory_iterator(dir + "/artifacts")) {
      EXPECT_FALSE(absl::StartsWith(entry.path().filename().string(), ".tmp-"));
    }
    ASSERT_TRUE(store->Push(TinyPolicyFile(-1 - round), "stable", "").ok());
  }
  // Each round: the writer's pushes (one at least) and the parent's.
  EXPECT_GE(Open(dir)->List()->policies.size(), 2u * 12u);
}

}  // namespace
}  // namespace phaseloop::policy_store
