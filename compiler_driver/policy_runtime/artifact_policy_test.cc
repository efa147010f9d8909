// ArtifactPolicy in single and stepwise modes, and what any mode refuses.
#include "compiler_driver/policy_runtime/artifact_policy_test_fixture.h"

namespace phaseloop::policy_runtime {
namespace {

TEST_F(ArtifactPolicyTest, SingleCandidateIsTheArgmax) {
  Load("sorting.c");
  for (uint64_t seed : {1, 2, 3, 4}) {
    auto policy = ArtifactPolicy::Create(Candidates(seed));
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_FALSE((*policy)->NeedsModule());
    const std::vector<float> scores =
        (*policy)->Score(autophase_, inst_count_, {});
    const int best = static_cast<int>(
        std::max_element(scores.begin(), scores.end()) - scores.begin());
    auto choice = (*policy)->Choose(*module_, autophase_, inst_count_, Env());
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->pipeline,
              (*policy)->artifact().candidates(best).pipeline());
    EXPECT_EQ((*policy)->ChooseFromFeatures(autophase_, inst_count_).pipeline,
              choice->pipeline);
  }
}

// With a margin, single keeps -Oz unless the best candidate beats -Oz's score
// by at least the margin.
TEST_F(ArtifactPolicyTest, SingleAbstainsToOzBelowTheMargin) {
  Load("sorting.c");
  v1::PolicyArtifact artifact = Candidates(7);
  auto plain = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(plain.ok());
  const std::vector<float> scores =
      (*plain)->Score(autophase_, inst_count_, {});
  int best = static_cast<int>(std::max_element(scores.begin(), scores.end()) -
                              scores.begin());
  const int oz = OzCandidateIndex(artifact);
  ASSERT_EQ(oz, 0);
  if (best == oz) {  // make some other candidate the best
    artifact.mutable_layers(artifact.layers_size() - 1)
        ->set_bias(1, scores[oz] - scores[1] + 1.0f +
                          artifact.layers(artifact.layers_size() - 1).bias(1));
    best = 1;
  }
  auto rescored = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(rescored.ok());
  const std::vector<float> s = (*rescored)->Score(autophase_, inst_count_, {});
  ASSERT_EQ(std::max_element(s.begin(), s.end()) - s.begin(), best);
  const float gap = s[best] - s[oz];
  ASSERT_GT(gap, 0);

  artifact.set_single_abstain_margin(gap * 1.01f);
  auto unsure = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(unsure.ok()) << unsure.status();
  const PolicyChoice abstained =
      (*unsure)->ChooseFromFeatures(autophase_, inst_count_);
  EXPECT_EQ(abstained.pipeline, kOzPipeline);
  EXPECT_NE(abstained.note.find("margin"), std::string::npos) << abstained.note;

  artifact.set_single_abstain_margin(gap * 0.99f);
  auto sure = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(sure.ok());
  EXPECT_EQ((*sure)->ChooseFromFeatures(autophase_, inst_count_).pipeline,
            artifact.candidates(best).pipeline());
}

// single never takes a candidate training excluded: the best of the rest,
// or -Oz when every other is excluded.
TEST_F(ArtifactPolicyTest, SingleNeverTakesAnExcludedCandidate) {
  Load("sorting.c");
  v1::PolicyArtifact artifact = Candidates(7);
  const int oz = OzCandidateIndex(artifact);
  ASSERT_EQ(oz, 0);
  auto plain = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(plain.ok());
  const std::vector<float> scores =
      (*plain)->Score(autophase_, inst_count_, {});
  std::vector<int> order(scores.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = static_cast<int>(c);
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return scores[x] > scores[y]; });
  // Exclude the best non-Oz candidate: the next best that is not excluded
  // (maybe -Oz) is taken.
  const int best = order[0] == oz ? order[1] : order[0];
  artifact.set_format_version(kPolicyFormatVersionSingleExcluded);
  artifact.mutable_candidates(best)->set_single_excluded(true);
  int expected = -1;
  for (int c : order) {
    if (c != best) {
      expected = c;
      break;
    }
  }
  auto excluding = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(excluding.ok()) << excluding.status();
  EXPECT_EQ((*excluding)->ChooseFromFeatures(autophase_, inst_count_).pipeline,
            artifact.candidates(expected).pipeline());
  // Every candidate but -Oz excluded: -Oz.
  for (int c = 0; c < artifact.candidates_size(); ++c) {
    artifact.mutable_candidates(c)->set_single_excluded(c != oz);
  }
  auto only_oz = ArtifactPolicy::Create(artifact);
  ASSERT_TRUE(only_oz.ok()) << only_oz.status();
  EXPECT_EQ((*only_oz)->ChooseFromFeatures(autophase_, inst_count_).pipeline,
            kOzPipeline);
}

TEST_F(ArtifactPolicyTest, SingleStepwiseAppliesMaxStepsActions) {
  Load("hashtable.c");
  testing::RandomArtifactOptions options;
  options.action_names = kActions;
  options.formulation = "stepwise";
  options.max_steps = 5;
  auto policy = ArtifactPolicy::Create(testing::RandomArtifact(options));
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_TRUE((*policy)->NeedsModule());
  const std::string before = ir::ModuleText(*module_);
  auto choice = (*policy)->Choose(*module_, autophase_, inst_count_, Env());
  ASSERT_TRUE(choice.ok()) << choice.status();
  // The first action is the argmax of the start state.
  const std::vector<float> scores =
      (*policy)->Score(autophase_, inst_count_, {});
  const int first = static_cast<int>(
      std::max_element(scores.begin(), scores.end()) - scores.begin());
  const auto& space = passes::ActionSpace::Llvm16();
  const std::string first_pipeline =
      space.at(*space.Find(kActions[first])).pipeline;
  EXPECT_EQ(choice->pipeline.substr(0, first_pipeline.size()), first_pipeline);
  EXPECT_TRUE(runner_->Validate(choice->pipeline).ok()) << choice->pipeline;
  EXPECT_EQ(ir::ModuleText(*module_), before);  // the module is untouched
}

// An action of the space that a policy may not run (lower-ifunc erases
// exported ifuncs: passes/pipeline_check.h) is never taken, whatever the
// network scores it.
TEST_F(ArtifactPolicyTest, StepwiseNeverTakesAnActionNotForPolicies) {
  Load("hashtable.c");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    testing::RandomArtifactOptions options;
    options.action_names = {"lower-ifunc", "instcombine", "sroa"};
    options.formulation = "stepwise";
    options.max_steps = 3;
    options.seed = seed;
    auto policy = ArtifactPolicy::Create(testing::RandomArtifact(options));
    ASSERT_TRUE(policy.ok()) << policy.status();
    const std::vector<float> scores =
        (*policy)->Score(autophase_, inst_count_, {});
    EXPECT_TRUE(std::isinf(scores[0]) && scores[0] < 0) << seed;
    auto choice = (*policy)->Choose(*module_, autophase_, inst_count_, Env());
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->pipeline.find("lower-ifunc"), std::string::npos)
        << seed << ": " << choice->pipeline;
  }
}

// A candidate holding the Attributor (refused after the shipped artifact
// was trained: it miscompiles correct programs) keeps the artifact usable
// but is never measured or chosen, in topk or single mode, whatever its
// score; an artifact of such candidates alone is refused.
TEST_F(ArtifactPolicyTest, ACandidateNoPolicyMayRunIsNeverMeasuredOrChosen) {
  Load("interpreter.c");
  const std::string attributor = "default<Oz>,attributor";
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testing::RandomArtifactOptions artifact;
    artifact.action_names = kActions;
    artifact.seed = seed;
    artifact.candidate_pipelines = {"default<Oz>", attributor,
                                    "scc-oz-module-inliner,attributor",
                                    "function(mem2reg)"};
    const v1::PolicyArtifact a = testing::RandomArtifact(artifact);
    ASSERT_TRUE(ValidatePolicyArtifact(a).ok()) << ValidatePolicyArtifact(a);
    for (InferenceMode mode : {InferenceMode::kTopK, InferenceMode::kSingle}) {
      InferenceOptions options;
      options.mode = mode;
      options.top_k = 4;
      options.budget = 1'000'000'000;
      auto policy = ArtifactPolicy::Create(a, options);
      ASSERT_TRUE(policy.ok()) << policy.status();
      auto choice = (*policy)->Choose(*module_, autophase_, inst_count_, Env());
      ASSERT_TRUE(choice.ok()) << choice.status();
      EXPECT_EQ(choice->pipeline.find("attributor"), std::string::npos)
          << seed << ": " << choice->pipeline;
      for (const auto& [pipeline, value] : choice->measured_pipelines) {
        EXPECT_EQ(pipeline.find("attributor"), std::string::npos) << pipeline;
      }
      // What an outcome cache entry may keep: -Oz and the candidates a
      // policy may run, nothing else.
      EXPECT_TRUE((*policy)->MayChoose("default<Oz>"));
      EXPECT_TRUE((*policy)->MayChoose("function(mem2reg)"));
      EXPECT_FALSE((*policy)->MayChoose(attributor));
      EXPECT_FALSE((*policy)->MayChoose("default<O3>"));
      EXPECT_FALSE((*policy)->MayChoose("function(mem2reg),instcombine"));
    }
  }
  testing::RandomArtifactOptions only;
  only.action_names = kActions;
  only.candidate_pipelines = {attributor};
  auto refused = ArtifactPolicy::Create(testing::RandomArtifact(only));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no policy may run"),
            std::string::npos)
      << refused.status();
}

TEST_F(ArtifactPolicyTest, AStepwisePolicyWithNoActionItMayTakeIsRefused) {
  testing::RandomArtifactOptions options;
  options.action_names = {"lower-ifunc"};
  options.formulation = "stepwise";
  auto policy = ArtifactPolicy::Create(testing::RandomArtifact(options));
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("no policy may run"),
            std::string::npos)
      << policy.status();
}

TEST_F(ArtifactPolicyTest, RejectsActionsOutsideTheActionSpace) {
  testing::RandomArtifactOptions options;
  options.action_names = {"instcombine", "no-such-pass"};
  auto policy = ArtifactPolicy::Create(testing::RandomArtifact(options));
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("no-such-pass"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::policy_runtime
