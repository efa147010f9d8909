#include "compiler_driver/policy_runtime/policy_artifact.h"

#include <fstream>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace phaseloop::policy_runtime {
namespace {

using ::testing::HasSubstr;

v1::PolicyArtifact Sample() {
  testing::RandomArtifactOptions options;
  options.seed = 7;
  v1::PolicyArtifact artifact = testing::RandomArtifact(options);
  (*artifact.mutable_metadata()->mutable_metrics())["b"] = 2.0;
  (*artifact.mutable_metadata()->mutable_metrics())["a"] = 1.0;
  return artifact;
}

TEST(PolicyArtifactTest, RoundTripsThroughFile) {
  const v1::PolicyArtifact artifact = Sample();
  ASSERT_TRUE(ValidatePolicyArtifact(artifact).ok());
  const std::string path =
      absl::StrCat(phaseloop::testing::MakeTempDir(), "/p.plpolicy");
  ASSERT_TRUE(WritePolicyArtifactFile(artifact, path).ok());
  absl::StatusOr<v1::PolicyArtifact> read = ReadPolicyArtifactFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  // Field by field: the metrics map's serialized byte order is not
  // deterministic, so comparing SerializeAsString() was flaky.
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*read, artifact))
      << read->ShortDebugString();
  EXPECT_EQ(PolicyVersionOf(*read), PolicyVersionOf(artifact));
  EXPECT_TRUE(
      LooksLikePolicyArtifactFile(phaseloop::testing::ReadFileOrEmpty(path)));
}

TEST(PolicyArtifactTest, VersionIsAContentHash) {
  v1::PolicyArtifact a = Sample();
  v1::PolicyArtifact b = Sample();
  EXPECT_EQ(PolicyVersionOf(a), PolicyVersionOf(b));
  EXPECT_EQ(PolicyVersionOf(a).size(), 32u);
  b.mutable_layers(0)->set_weights(0, b.layers(0).weights(0) + 1e-3f);
  EXPECT_NE(PolicyVersionOf(a), PolicyVersionOf(b));
}

TEST(PolicyArtifactTest, RejectsMissingFile) {
  auto read = ReadPolicyArtifactFile("/nonexistent/x.plpolicy");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("/nonexistent/x.plpolicy"));
}

TEST(PolicyArtifactTest, RejectsFlippedPayloadByte) {
  std::string bytes = SerializePolicyArtifactFile(Sample());
  bytes[bytes.size() - 40] ^= 0x01;
  auto parsed = ParsePolicyArtifactFile(bytes, "tampered.plpolicy");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("tampered.plpolicy"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("checksum"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("re-pull"));
}

TEST(PolicyArtifactTest, RejectsTruncatedFile) {
  const std::string bytes = SerializePolicyArtifactFile(Sample());
  for (size_t keep :
       {bytes.size() - 1, bytes.size() / 2, size_t{20}, size_t{0}}) {
    auto parsed =
        ParsePolicyArtifactFile(bytes.substr(0, keep), "short.plpolicy");
    ASSERT_FALSE(parsed.ok()) << keep;
    EXPECT_THAT(parsed.status().message(), HasSubstr("short.plpolicy"));
  }
  auto parsed = ParsePolicyArtifactFile(bytes.substr(0, bytes.size() - 1),
                                        "short.plpolicy");
  EXPECT_THAT(parsed.status().message(), HasSubstr("truncated"));
}

TEST(PolicyArtifactTest, RejectsWrongVersionAndMagic) {
  const std::string bytes = SerializePolicyArtifactFile(Sample());
  auto v3 = ParsePolicyArtifactFile(
      absl::StrReplaceAll(bytes,
                          {{"format_version 1\n", "format_version 3\n"}}),
      "v3.plpolicy");
  ASSERT_FALSE(v3.ok());
  EXPECT_THAT(v3.status().message(), HasSubstr("format version 3"));
  // A header that disagrees with its payload is damage.
  auto v2 = ParsePolicyArtifactFile(
      absl::StrReplaceAll(bytes,
                          {{"format_version 1\n", "format_version 2\n"}}),
      "v2.plpolicy");
  ASSERT_FALSE(v2.ok());
  EXPECT_THAT(v2.status().message(), HasSubstr("the payload 1"));
  auto magic = ParsePolicyArtifactFile(absl::StrCat("x", bytes), "m.plpolicy");
  ASSERT_FALSE(magic.ok());
  EXPECT_THAT(magic.status().message(), HasSubstr("not a policy artifact"));
  EXPECT_FALSE(LooksLikePolicyArtifactFile("baseline"));
}

TEST(PolicyArtifactTest, RejectsInvalidProtoEvenWithAGoodChecksum) {
  // A payload that is not a PolicyArtifact, with a correct header.
  const std::string payload = "\xff\xff\xff\xff";
  std::string file = absl::StrCat(
      "phaseloop-policy\nformat_version 1\npayload_bytes 4\npayload_blake3 ",
      std::string(32, '0'), "\n", payload);
  EXPECT_FALSE(ParsePolicyArtifactFile(file, "junk.plpolicy").ok());
  // Serialize an artifact with bad shapes: the file is intact, validation
  // refuses it.
  v1::PolicyArtifact bad = Sample();
  bad.mutable_layers(0)->mutable_weights()->RemoveLast();
  auto shapes = ParsePolicyArtifactFile(SerializePolicyArtifactFile(bad),
                                        "shapes.plpolicy");
  ASSERT_FALSE(shapes.ok());
  EXPECT_THAT(shapes.status().message(), HasSubstr("layer 0"));
}

TEST(PolicyArtifactTest, ValidateChecksShapesAndIndices) {
  EXPECT_TRUE(ValidatePolicyArtifact(Sample()).ok());
  {
    // An action this driver does not have: every compile refused the
    // artifact, while `policy show`, the store and `toolchain bazel`
    // (which validate it) took it.
    v1::PolicyArtifact a = Sample();
    a.set_action_names(0, "no-such-pass");
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("the policy uses action 'no-such-pass', which is "
                          "not in this driver's action space"));
  }
  {
    v1::PolicyArtifact a = Sample();
    a.mutable_normalization()->mutable_mean()->RemoveLast();
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("normalization"));
  }
  {
    v1::PolicyArtifact a = Sample();
    a.mutable_candidates(1)->add_actions(8);  // 8 actions: 0..7
    EXPECT_THAT(ValidatePolicyArtifact(a).message(), HasSubstr("action 8"));
  }
  {
    v1::PolicyArtifact a = Sample();
    a.add_candidates()->set_pipeline("default<O2>");  // outputs no longer match
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("one score per candidate"));
  }
  {
    v1::PolicyArtifact a = Sample();
    a.set_objective("speed");
    EXPECT_THAT(ValidatePolicyArtifact(a).message(), HasSubstr("objective"));
  }
  for (const char* objective : {"alloc_size", "text_size", "ir_count"}) {
    v1::PolicyArtifact a = Sample();
    a.set_objective(objective);
    EXPECT_TRUE(ValidatePolicyArtifact(a).ok()) << objective;
  }
  {
    v1::PolicyArtifact a = Sample();
    a.set_format_version(3);
    EXPECT_FALSE(ValidatePolicyArtifact(a).ok());
  }
  {
    v1::PolicyArtifact a = Sample();
    a.mutable_layers(1)->set_inputs(17);
    EXPECT_THAT(ValidatePolicyArtifact(a).message(), HasSubstr("layer 1"));
  }
  {
    v1::PolicyArtifact a = Sample();
    a.set_single_abstain_margin(-1);
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("single_abstain_margin"));
    a.set_single_abstain_margin(std::numeric_limits<float>::quiet_NaN());
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("single_abstain_margin"));
  }
  {
    // A margin needs the -Oz candidate to abstain to.
    v1::PolicyArtifact a = Sample();
    ASSERT_GE(OzCandidateIndex(a), 0);
    a.set_single_abstain_margin(2.5);
    EXPECT_TRUE(ValidatePolicyArtifact(a).ok());
    a.mutable_candidates(OzCandidateIndex(a))->set_pipeline("default<Os>");
    EXPECT_EQ(OzCandidateIndex(a), -1);
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("-Oz candidate"));
  }
  {
    // Single falls back to -Oz from an excluded candidate: -Oz must be
    // there, and may not be excluded itself.
    v1::PolicyArtifact a = Sample();
    const int oz = OzCandidateIndex(a);
    ASSERT_GE(oz, 0);
    ASSERT_GE(a.candidates_size(), 2);
    const int other = oz == 0 ? 1 : 0;
    a.mutable_candidates(other)->set_single_excluded(true);
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("needs format_version 2"));
    a.set_format_version(kPolicyFormatVersionSingleExcluded);
    EXPECT_TRUE(ValidatePolicyArtifact(a).ok());
    // Written as format 2 and read back, exclusion and all.
    auto read = ParsePolicyArtifactFile(SerializePolicyArtifactFile(a), "x");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(read->candidates(other).single_excluded());
    EXPECT_THAT(SerializePolicyArtifactFile(a),
                HasSubstr("\nformat_version 2\n"));
    a.mutable_candidates(oz)->set_single_excluded(true);
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("excluded from single mode"));
    a.mutable_candidates(oz)->set_single_excluded(false);
    a.mutable_candidates(oz)->set_pipeline("default<Os>");
    EXPECT_THAT(ValidatePolicyArtifact(a).message(),
                HasSubstr("needs a -Oz candidate"));
  }
  testing::RandomArtifactOptions stepwise;
  stepwise.formulation = "stepwise";
  EXPECT_TRUE(ValidatePolicyArtifact(testing::RandomArtifact(stepwise)).ok());
}

TEST(PolicyArtifactTest, WriteRefusesInvalidAndLeavesNothing) {
  v1::PolicyArtifact bad = Sample();
  bad.clear_layers();
  const std::string dir = phaseloop::testing::MakeTempDir();
  EXPECT_FALSE(WritePolicyArtifactFile(bad, dir + "/p.plpolicy").ok());
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(dir + "/p.plpolicy"), "");
}

}  // namespace
}  // namespace phaseloop::policy_runtime
