// Every pipeline runtime search proposes is one a policy may carry: checked
// by pipeline_check and loaded as a table policy row, as the wrapper will.
#include "staging_harness/runtime_search/pipeline_vocabulary.h"

#include <fstream>
#include <set>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::runtime_search {
namespace {

TEST(PipelineVocabularyTest, CandidateBuildReadsProfileAndLto) {
  EXPECT_FALSE(CandidateBuildOf("").profile);
  EXPECT_FALSE(CandidateBuildOf("").lto);
  EXPECT_TRUE(CandidateBuildOf("-fprofile-instr-use=/p/a.profdata").profile);
  EXPECT_TRUE(CandidateBuildOf("-fprofile-use=a.profdata").profile);
  EXPECT_FALSE(CandidateBuildOf("-fprofile-instr-generate").profile);
  EXPECT_TRUE(CandidateBuildOf("-flto -fuse-ld=/usr/bin/ld.lld-16").lto);
  EXPECT_TRUE(CandidateBuildOf("-flto=thin").lto);
  EXPECT_FALSE(CandidateBuildOf("-flto -fno-lto").lto);
  EXPECT_FALSE(CandidateBuildOf("-flto-jobs=2").lto);
  EXPECT_FALSE(CandidateBuildOf("-flto=bogus").lto);  // clang rejects it
}

// Under LTO the link generates the code: no codegen<...> candidate is
// proposed, with or without a profile; every other one still is.
TEST(PipelineVocabularyTest, LtoDropsCodegenChoices) {
  std::vector<std::string> refused;
  const std::vector<Candidate> lto =
      CheckedVocabulary({.profile = true, .lto = true}, &refused);
  const std::vector<Candidate> plain = CheckedVocabulary({}, &refused);
  int codegen_free = 0;
  for (const Candidate& c : RuntimeVocabulary()) {
    if (c.pipeline.find("codegen<") == std::string::npos) ++codegen_free;
  }
  EXPECT_EQ(int(lto.size()), codegen_free);
  EXPECT_LT(lto.size(), RuntimeVocabulary().size());
  for (const Candidate& c : lto) {
    EXPECT_EQ(c.pipeline.find("codegen<"), std::string::npos) << c.pipeline;
  }
  EXPECT_LE(lto.size(), plain.size());
}

TEST(PipelineVocabularyTest, EveryPipelineIsAcceptedByPipelineCheck) {
  ASSERT_GE(RuntimeVocabulary().size(), 6u);
  for (const Candidate& c : RuntimeVocabulary()) {
    EXPECT_TRUE(passes::CheckWholePolicyPipeline(c.pipeline, "").ok())
        << c.pipeline << ": "
        << passes::CheckWholePolicyPipeline(c.pipeline, "");
  }
  std::vector<std::string> refused;
  EXPECT_EQ(CheckedVocabulary({.profile = true}, &refused).size(),
            RuntimeVocabulary().size());
  EXPECT_TRUE(refused.empty()) << refused[0];
  // Without a profile, the pipelines that only read one are not proposed.
  const std::vector<Candidate> plain = CheckedVocabulary({}, &refused);
  EXPECT_LT(plain.size(), RuntimeVocabulary().size());
  for (const Candidate& c : plain) {
    EXPECT_FALSE(c.needs_profile) << c.pipeline;
    EXPECT_EQ(c.pipeline.find("split-functions"), std::string::npos);
  }
  EXPECT_TRUE(refused.empty()) << refused[0];
}

TEST(PipelineVocabularyTest, EveryPipelineLoadsAsATablePolicyRow) {
  const std::string path = testing::MakeTempDir() + "/t.table";
  std::ofstream out(path);
  out << cc_wrapper::kTableHeader << "\n";
  int row = 0;
  for (const Candidate& c : RuntimeVocabulary()) {
    char hash[33];
    std::snprintf(hash, sizeof(hash), "%032x", ++row);
    out << hash << "\t" << c.pipeline << "\n";
  }
  out.close();
  absl::StatusOr<std::unique_ptr<cc_wrapper::PolicyRunner>> policy =
      cc_wrapper::LoadPolicy("table:" + path);
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_STREQ((*policy)->kind(), "table");
}

TEST(PipelineVocabularyTest, TheCheckRefusesWhatAPolicyMayNotRun) {
  // So that CheckedVocabulary's filter is a real one.
  EXPECT_FALSE(passes::CheckPolicyPipeline("internalize,default<O3>").ok());
}

TEST(PipelineVocabularyTest, SeededOrderIsAPermutationFixedBySeedAndModule) {
  const std::vector<Candidate>& all = RuntimeVocabulary();
  auto names = [](const std::vector<Candidate>& v) {
    std::vector<std::string> n;
    for (const Candidate& c : v) n.push_back(c.pipeline);
    return n;
  };
  const auto a = names(SeededOrder(all, 1, "m1"));
  EXPECT_EQ(a, names(SeededOrder(all, 1, "m1")));
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), all.size());
  bool differs = false;
  for (uint64_t seed = 2; seed < 6; ++seed) {
    differs = differs || names(SeededOrder(all, seed, "m1")) != a;
  }
  EXPECT_TRUE(differs);
}

TEST(PipelineVocabularyTest, SeededOrderPutsWhatNeedsAProfileFirst) {
  std::vector<std::string> refused;
  const std::vector<Candidate> profiled =
      CheckedVocabulary({.profile = true}, &refused);
  size_t needing = 0;
  for (const Candidate& c : profiled) needing += c.needs_profile;
  ASSERT_GE(needing, 1u);
  for (uint64_t seed = 1; seed < 6; ++seed) {
    const std::vector<Candidate> order = SeededOrder(profiled, seed, "m1");
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_EQ(order[i].needs_profile, i < needing) << seed << " " << i;
    }
  }
}

// The speed learner's candidates (configs/learner/speed_candidates.json) are
// the vocabulary the runtime search evaluates plus -O3, the baseline its
// rewards are relative to: a pipeline in one and not the other would be a
// candidate without data or data without a candidate.
TEST(PipelineVocabularyTest, SpeedCandidatesFileIsTheVocabularyAndO3) {
  std::ifstream in("configs/learner/speed_candidates.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json file = nlohmann::json::parse(in);
  std::multiset<std::string> in_file;
  std::set<std::string> names;
  for (const nlohmann::json& c : file.at("candidates")) {
    in_file.insert(c.at("pipeline").get<std::string>());
    names.insert(c.at("name").get<std::string>());
  }
  std::multiset<std::string> expected = {"default<O3>"};
  for (const Candidate& c : RuntimeVocabulary()) expected.insert(c.pipeline);
  EXPECT_EQ(in_file, expected);
  EXPECT_EQ(names.size(), in_file.size());
}

}  // namespace
}  // namespace phaseloop::runtime_search
