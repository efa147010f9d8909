#include "compiler_driver/cc_wrapper/policy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr char kHash[] = "0123456789abcdef0123456789abcdef";

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testing::MakeTempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

PolicyInput Input(const std::string& hash, const std::string& level) {
  return PolicyInput{hash, nullptr, level};
}

TEST(PolicyTest, BaselineRunsTheUsersLevel) {
  auto policy = LoadPolicy("baseline");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_STREQ((*policy)->kind(), "baseline");
  EXPECT_EQ((*policy)->Decide(Input(kHash, "O2")), "default<O2>");
  EXPECT_EQ((*policy)->Decide(Input(kHash, "Oz")), "default<Oz>");
  EXPECT_EQ((*policy)->version(), "baseline");
}

TEST(PolicyTest, FixedRunsItsPipelineWithAStableVersion) {
  auto a = LoadPolicy("fixed:default<Oz>");
  auto b = LoadPolicy("  fixed:default<Oz> ");
  auto c = LoadPolicy("fixed:default<O3>");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ((*a)->Decide(Input(kHash, "O2")), "default<Oz>");
  EXPECT_EQ((*a)->version(), (*b)->version());
  EXPECT_NE((*a)->version(), (*c)->version());
  EXPECT_EQ((*a)->version().size(), 32u);
}

TEST(PolicyTest, PolicyFileHoldsOneSpecLine) {
  auto from_file =
      LoadPolicy(WriteTemp("p", "# our policy\n\nfixed:default<Oz>\n"));
  auto inline_spec = LoadPolicy("fixed:default<Oz>");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ((*from_file)->version(), (*inline_spec)->version());
}

TEST(PolicyTest, TableMapsModulesAndFallsBackToBaseline) {
  std::string table = std::string(kTableHeader) + "\n" + kHash +
                      "\tfunction(instcombine),default<Oz>\n";
  for (const std::string& spec :
       {WriteTemp("t", table), "table:" + WriteTemp("t2", table)}) {
    auto policy = LoadPolicy(spec);
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_STREQ((*policy)->kind(), "table");
    EXPECT_EQ((*policy)->Decide(Input(kHash, "Oz")),
              "function(instcombine),default<Oz>");
    EXPECT_EQ((*policy)->Decide(Input(std::string(32, 'f'), "O2")),
              "default<O2>");
    // A module the table has no row for is not one the policy chose for.
    EXPECT_EQ((*policy)->DecideWithNote(Input(kHash, "Oz")).not_applied, "");
    EXPECT_EQ((*policy)
                  ->DecideWithNote(Input(std::string(32, 'f'), "O2"))
                  .not_applied,
              "module_not_in_table");
  }
}

TEST(PolicyTest, BadPoliciesAreClearErrors) {
  struct Case {
    std::string spec;
    std::string expected;  // part of the message
  } cases[] = {
      {"/no/such/policy", "/no/such/policy"},
      {"table:/no/such/table", "/no/such/table"},
      {"fixed:", "needs a pipeline"},
      {"", "empty policy"},
      {WriteTemp("empty", "# nothing\n"), "is empty"},
      {WriteTemp("two", "baseline\nfixed:default<O2>\n"), "more than one"},
      {WriteTemp("bogus", "learned-v9\n"), "unknown policy"},
      {WriteTemp("ref", "table:/x\n"), "refers to another file"},
      {WriteTemp("v2", "# phaseloop policy table v2\n"), "v1"},
      {WriteTemp("row", std::string(kTableHeader) + "\nnot-a-hash\tx\n"),
       "line 2"},
      {WriteTemp("nopipe", std::string(kTableHeader) + "\n" + kHash + "\n"),
       "line 2"},
  };
  for (const Case& c : cases) {
    auto policy = LoadPolicy(c.spec);
    ASSERT_FALSE(policy.ok()) << c.spec;
    EXPECT_NE(policy.status().message().find(c.expected), std::string::npos)
        << c.spec << ": " << policy.status();
  }
}

// Learned artifacts: detected by magic or named with artifact:, versioned by
// content hash, applied only at the levels their objective is for.
v1::PolicyArtifact SizeArtifact(const std::string& objective) {
  policy_runtime::testing::RandomArtifactOptions options;
  options.objective = objective;
  options.action_names = {"instcombine", "simplifycfg", "mem2reg"};
  options.candidate_pipelines = {"default<Oz>", "default<O1>",
                                 "function(mem2reg)"};
  return policy_runtime::testing::RandomArtifact(options);
}

TEST(PolicyTest, ArtifactFileIsALearnedPolicy) {
  const v1::PolicyArtifact artifact = SizeArtifact("text_size");
  const std::string path = testing::MakeTempDir() + "/p.plpolicy";
  ASSERT_TRUE(policy_runtime::WritePolicyArtifactFile(artifact, path).ok());
  std::array<int64_t, observation::kAutophaseDim> autophase{};
  std::array<int64_t, observation::kInstCountDim> inst_count{};
  autophase[0] = 12;
  inst_count[0] = 40;
  for (const std::string& spec :
       {path, "artifact:" + path, "artifact:" + path + "?mode=single&k=2"}) {
    auto policy = LoadPolicy(spec);
    ASSERT_TRUE(policy.ok()) << spec << ": " << policy.status();
    EXPECT_STREQ((*policy)->kind(), "artifact");
    EXPECT_EQ((*policy)->version(), policy_runtime::PolicyVersionOf(artifact));
    PolicyInput input = Input(kHash, "Oz");
    input.inst_count = &inst_count;
    input.autophase = &autophase;
    PolicyDecision oz = (*policy)->DecideWithNote(input);
    bool is_candidate = false;
    for (const auto& c : artifact.candidates()) {
      is_candidate |= c.pipeline() == oz.pipeline;
    }
    EXPECT_TRUE(is_candidate) << oz.pipeline;
    EXPECT_NE(oz.note.find("single: candidate"), std::string::npos) << oz.note;
    EXPECT_EQ(oz.not_applied, "");
    EXPECT_EQ(oz.oz_alloc_size, -1);  // single mode measures nothing
    input.opt_level = "O2";
    PolicyDecision o2 = (*policy)->DecideWithNote(input);
    EXPECT_EQ(o2.pipeline, "default<O2>");
    EXPECT_NE(o2.note.find("does not apply at -O2"), std::string::npos);
    // The baseline ran: stats must not count this file as optimized.
    EXPECT_EQ(o2.not_applied, "not_applicable_at_level");
    // Nor at -Os: the size policy is -Oz's (at -Os it made objects larger
    // than clang -Os's); clang's -Os pipeline runs.
    input.opt_level = "Os";
    PolicyDecision os = (*policy)->DecideWithNote(input);
    EXPECT_EQ(os.pipeline, "default<Os>");
    EXPECT_EQ(os.not_applied, "not_applicable_at_level");
    EXPECT_NE(os.note.find("does not apply at -Os (size policies act at -Oz)"),
              std::string::npos)
        << os.note;
  }
}

// A policy file may name an artifact; a relative path is taken from the
// policy file's directory (how a Bazel toolchain package refers to its
// copy of the shipped default), and the query's options apply.
TEST(PolicyTest, PolicyFileNamesAnArtifactBesideIt) {
  const v1::PolicyArtifact artifact = SizeArtifact("text_size");
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(
      policy_runtime::WritePolicyArtifactFile(artifact, dir + "/d.plpolicy")
          .ok());
  std::ofstream(dir + "/policy")
      << "# the default\nartifact:d.plpolicy?mode=topk&k=2&budget=10000\n";
  auto policy = LoadPolicy(dir + "/policy");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_STREQ((*policy)->kind(), "artifact");
  EXPECT_EQ((*policy)->version(), policy_runtime::PolicyVersionOf(artifact));

  std::ofstream(dir + "/missing") << "artifact:gone.plpolicy\n";
  auto missing = LoadPolicy(dir + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir + "/gone.plpolicy"),
            std::string::npos)
      << missing.status();
  EXPECT_NE(missing.status().message().find(dir + "/missing"),
            std::string::npos)
      << missing.status();
  std::ofstream(dir + "/bad_query") << "artifact:d.plpolicy?mode=fast\n";
  EXPECT_FALSE(LoadPolicy(dir + "/bad_query").ok());
}

TEST(PolicyTest, RuntimeArtifactAppliesOnlyAtSpeedLevels) {
  const std::string path = testing::MakeTempDir() + "/r.plpolicy";
  ASSERT_TRUE(
      policy_runtime::WritePolicyArtifactFile(SizeArtifact("runtime"), path)
          .ok());
  auto policy = LoadPolicy(path);
  ASSERT_TRUE(policy.ok());
  std::array<int64_t, observation::kAutophaseDim> autophase{};
  std::array<int64_t, observation::kInstCountDim> inst_count{};
  PolicyInput input = Input(kHash, "Oz");
  input.autophase = &autophase;
  input.inst_count = &inst_count;
  EXPECT_EQ((*policy)->Decide(input), "default<Oz>");
  input.opt_level = "O1";
  EXPECT_EQ((*policy)->Decide(input), "default<O1>");
}

TEST(PolicyTest, BadArtifactsAreRefusedWithTheReason) {
  const std::string dir = testing::MakeTempDir();
  std::string bytes =
      policy_runtime::SerializePolicyArtifactFile(SizeArtifact("text_size"));
  std::string tampered = bytes;
  tampered[tampered.size() - 10] ^= 0x20;
  std::ofstream(dir + "/t.plpolicy") << tampered;
  std::ofstream(dir + "/s.plpolicy") << bytes.substr(0, bytes.size() / 2);
  const std::string good = dir + "/g.plpolicy";
  std::ofstream(good) << bytes;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir + "/t.plpolicy", "checksum"},
      {dir + "/s.plpolicy", "truncated"},
      {"artifact:" + dir + "/missing.plpolicy", "missing.plpolicy"},
      {"artifact:" + good + "?mode=beam", "unknown inference mode"},
      {"artifact:" + good + "?k=-1", "k must be"},
      {"artifact:" + good + "?speed=1", "unknown option"},
  };
  for (const auto& [spec, expected] : cases) {
    auto policy = LoadPolicy(spec);
    ASSERT_FALSE(policy.ok()) << spec;
    EXPECT_NE(policy.status().message().find(expected), std::string::npos)
        << spec << ": " << policy.status().message();
  }
}

// Nothing a policy carries may change what a program means: pipelines
// outside the action space are refused when the policy is loaded, whatever
// form the policy takes, with the offending element named.
TEST(PolicyTest, PipelinesAPolicyMayNotRunAreRefused) {
  const std::string dir = testing::MakeTempDir();
  v1::PolicyArtifact artifact = SizeArtifact("text_size");
  artifact.mutable_candidates(2)->set_pipeline("function(mem2reg),internalize");
  std::ofstream(dir + "/internalize.plpolicy")
      << policy_runtime::SerializePolicyArtifactFile(artifact);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fixed:internalize", "'internalize'"},
      {"fixed:internalize,globaldce", "'internalize'"},
      {"fixed:default<Oz>,strip,codegen<machine-outliner>", "'strip'"},
      {"fixed:function(asan)", "'asan'"},
      {WriteTemp("file", "fixed:default<O2>,internalize\n"), "'internalize'"},
      {WriteTemp("table", std::string(kTableHeader) + "\n" + kHash +
                              "\tfunction(instcombine),internalize\n"),
       "'internalize'"},
      {dir + "/internalize.plpolicy", "'internalize'"},
  };
  for (const auto& [spec, named] : cases) {
    auto policy = LoadPolicy(spec);
    ASSERT_FALSE(policy.ok()) << spec;
    EXPECT_TRUE(passes::IsRefusedPipeline(policy.status()))
        << spec << ": " << policy.status();
    EXPECT_NE(policy.status().message().find(named), std::string::npos)
        << spec << ": " << policy.status().message();
  }
  // The shipped default's every candidate is within the action space.
  auto shipped = LoadPolicy("artifact:configs/policies/default.plpolicy");
  EXPECT_TRUE(shipped.ok()) << shipped.status();
}

TEST(PolicyTest, DefaultPolicyIsFoundBesideTheBinaries) {
  const std::string prefix = testing::MakeTempDir();
  std::filesystem::create_directories(prefix + "/bin");
  EXPECT_EQ(FindDefaultPolicy(prefix + "/bin"), "");
  std::filesystem::create_directories(prefix + "/share/phaseloop/policies");
  std::ofstream(prefix + "/share/phaseloop/policies/default.plpolicy") << "x";
  EXPECT_EQ(FindDefaultPolicy(prefix + "/bin"),
            prefix + "/share/phaseloop/policies/default.plpolicy");
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
