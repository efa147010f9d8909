// phaseloop-cc with a trust file (PHASELOOP_TRUST_FILE): an artifact signed
// by a trusted key runs; an unsigned, wrongly signed or tampered one, or a
// broken trust file, fails open — plain clang's very object and output —
// and `phaseloop stats` counts it under its own reason.
#include <gtest/gtest.h>

#include <sstream>

#include "common/files/atomic_file.h"
#include "common/signing/signature.h"
#include "common/signing/test_keys.h"
#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/decision_stats.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"

namespace phaseloop {
namespace {

using cc_wrapper::testing::AbsolutePath;
using signing::testing::TestKey;

class SignedPolicyWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cc_ = AbsolutePath("compiler_driver/cc_wrapper/phaseloop-cc");
    source_ = AbsolutePath("compiler_driver/fixtures/sorting.c");
    policy_runtime::testing::RandomArtifactOptions options;
    options.action_names = {"instcombine", "simplifycfg", "mem2reg"};
    options.candidate_pipelines = {"default<Oz>", "default<O1>",
                                   "default<Oz>,function(instcombine)"};
    artifact_ = policy_runtime::testing::RandomArtifact(options);
    artifact_path_ = dir_ + "/size.plpolicy";
    ASSERT_TRUE(
        policy_runtime::WritePolicyArtifactFile(artifact_, artifact_path_)
            .ok());
    bytes_ = testing::ReadFileOrEmpty(artifact_path_);
    trust_ = dir_ + "/trust";
    signing::testing::WriteTrustFile(trust_, {TestKey(1), TestKey(2)});
  }

  void Sign(const signing::SigningKey& key) {
    ASSERT_TRUE(
        files::WriteFileAtomically(signing::SignaturePathFor(artifact_path_),
                                   signing::SignArtifact(bytes_, key))
            .ok());
  }

  // Compiles with the wrapper to `object` under the trust file.
  int Wrapper(const std::string& object, std::string* output) {
    return scratch_.Run({cc_, "-Oz", "-c", source_, "-o", object,
                         "--phaseloop-policy=" + artifact_path_},
                        {{"PHASELOOP_TRUST_FILE", trust_}}, output);
  }

  // The wrapper fell back: plain clang-16's object and output, byte for
  // byte, and a FAIL_OPEN record with `reason`.
  void ExpectFailOpen(const std::string& reason, const std::string& detail) {
    std::string wrapper_output, clang_output;
    ASSERT_EQ(Wrapper("wrapped.o", &wrapper_output), 0) << wrapper_output;
    ASSERT_EQ(scratch_.Run({"clang-16", "-Oz", "-c", source_, "-o", "plain.o"},
                           {}, &clang_output),
              0);
    const std::string wrapped = testing::ReadFileOrEmpty(dir_ + "/wrapped.o");
    ASSERT_FALSE(wrapped.empty());
    EXPECT_EQ(wrapped, testing::ReadFileOrEmpty(dir_ + "/plain.o"));
    EXPECT_EQ(wrapper_output, clang_output);
    std::vector<v1::Decision> d = scratch_.Decisions();
    ASSERT_FALSE(d.empty());
    EXPECT_EQ(d.back().outcome(), v1::FAIL_OPEN);
    EXPECT_EQ(d.back().reason(), reason);
    EXPECT_NE(d.back().detail().find(detail), std::string::npos)
        << d.back().detail();
  }

  cc_wrapper::testing::WrapperScratch scratch_;
  const std::string dir_ = scratch_.dir();
  std::string cc_, source_, artifact_path_, bytes_, trust_;
  v1::PolicyArtifact artifact_;
};

TEST_F(SignedPolicyWrapperTest, ASignedArtifactRuns) {
  Sign(TestKey(2));
  std::string output;
  ASSERT_EQ(Wrapper("a.o", &output), 0) << output;
  std::vector<v1::Decision> d = scratch_.Decisions();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].outcome(), v1::OPTIMIZED) << d[0].detail();
  EXPECT_EQ(d[0].policy_version(), policy_runtime::PolicyVersionOf(artifact_));
}

TEST_F(SignedPolicyWrapperTest, AnUnsignedArtifactFailsOpen) {
  ExpectFailOpen("policy_unsigned", "is not signed");
}

TEST_F(SignedPolicyWrapperTest, AWrongKeyFailsOpen) {
  Sign(TestKey(3));
  ExpectFailOpen("policy_untrusted", TestKey(3).key_id);
}

TEST_F(SignedPolicyWrapperTest, ATamperedArtifactFailsOpen) {
  Sign(TestKey(1));
  // Re-written with other weights after signing: still a valid artifact.
  artifact_.mutable_layers(0)->set_bias(0, 0.125f);
  ASSERT_TRUE(
      policy_runtime::WritePolicyArtifactFile(artifact_, artifact_path_).ok());
  ExpectFailOpen("policy_untrusted", "does not match its bytes");
}

TEST_F(SignedPolicyWrapperTest, AMalformedTrustFileFailsOpen) {
  Sign(TestKey(1));
  ASSERT_TRUE(files::WriteFileAtomically(trust_, "phaseloop-trust v1\n").ok());
  ExpectFailOpen("policy_untrusted", "lists no key");
}

TEST_F(SignedPolicyWrapperTest, StatsCountEachRefusalUnderItsReason) {
  std::string output;
  ASSERT_EQ(Wrapper("a.o", &output), 0);  // unsigned
  Sign(TestKey(3));
  ASSERT_EQ(Wrapper("b.o", &output), 0);  // untrusted
  Sign(TestKey(1));
  ASSERT_EQ(Wrapper("c.o", &output), 0);  // runs
  absl::StatusOr<cc_wrapper::SpoolContents> spool =
      cc_wrapper::ReadSpool(scratch_.spool());
  ASSERT_TRUE(spool.ok()) << spool.status();
  cc_wrapper::DecisionStats stats;
  cc_wrapper::AddSpool(*spool, 0, &stats);
  using Key = std::pair<std::string, std::string>;
  EXPECT_EQ(stats.by_reason[Key("fail_open", "policy_unsigned")], 1);
  EXPECT_EQ(stats.by_reason[Key("fail_open", "policy_untrusted")], 1);
  EXPECT_EQ(stats.by_outcome["optimized"], 1);
  std::ostringstream table;
  cc_wrapper::PrintStatsTable(stats, scratch_.spool(), table);
  EXPECT_NE(table.str().find("policy_unsigned"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("policy_untrusted"), std::string::npos);
}

TEST_F(SignedPolicyWrapperTest, WithoutATrustFileNothingChanges) {
  std::string output;
  ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", source_, "-o", "a.o",
                          "--phaseloop-policy=" + artifact_path_},
                         {}, &output),
            0)
      << output;
  EXPECT_EQ(scratch_.Decisions().back().outcome(), v1::OPTIMIZED);
}

}  // namespace
}  // namespace phaseloop
