#include "offline_rl/learner/learner_config.h"

#include <string>

#include "gtest/gtest.h"

namespace phaseloop::offline_rl {
namespace {

TEST(LearnerConfigTest, ShippedConfigsParse) {
  for (const char* name :
       {"size_candidate_cql", "size_candidate_bc", "size_stepwise_cql",
        "size_stepwise_bc", "speed_stepwise_cql", "speed_candidate_cql"}) {
    auto c =
        LoadLearnerConfig(std::string("configs/learner/") + name + ".yaml");
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_FALSE(c->text.empty());
  }
  auto cql = LoadLearnerConfig("configs/learner/size_candidate_cql.yaml");
  ASSERT_TRUE(cql.ok());
  EXPECT_EQ(cql->formulation, "candidate");
  EXPECT_EQ(cql->algorithm, "cql");
  EXPECT_EQ(cql->network.hidden, (std::vector<int>{128, 128}));
  EXPECT_EQ(cql->policy_objective, "alloc_size");
  auto speed = LoadLearnerConfig("configs/learner/speed_stepwise_cql.yaml");
  ASSERT_TRUE(speed.ok());
  EXPECT_EQ(speed->policy_objective, "runtime");
  EXPECT_DOUBLE_EQ(speed->final_reward_weights.at("canary"), 1.0);
  auto runtime = LoadLearnerConfig("configs/learner/speed_candidate_cql.yaml");
  ASSERT_TRUE(runtime.ok());
  EXPECT_EQ(runtime->objective, "runtime");
  EXPECT_EQ(runtime->formulation, "candidate");
  // The loop's speed policy learns from canary runs as well as the lab.
  EXPECT_DOUBLE_EQ(runtime->final_reward_weights.at("staging"), 1.0);
  EXPECT_DOUBLE_EQ(runtime->final_reward_weights.at("canary"), 1.0);
}

TEST(LearnerConfigTest, RuntimeEpisodesTrainOnlyCandidateRuntimePolicies) {
  auto stepwise = ParseLearnerConfig(
      "formulation: stepwise\nobjective: runtime\n", "r.yaml");
  ASSERT_FALSE(stepwise.ok());
  EXPECT_NE(stepwise.status().message().find("formulation: candidate"),
            std::string::npos);
  auto size = ParseLearnerConfig(
      "formulation: candidate\nobjective: runtime\npolicy_objective: "
      "text_size\n",
      "r.yaml");
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("policy_objective"),
            std::string::npos);
  auto ok = ParseLearnerConfig("formulation: candidate\nobjective: runtime\n",
                               "r.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->policy_objective, "runtime");
}

TEST(LearnerConfigTest, ReadsEveryField) {
  auto c = ParseLearnerConfig(R"(
formulation: stepwise
algorithm: bc
objective: ir_count
max_steps: 7
reward: {step_weight: 0.5, final_weights: {staging: 2}}
network: {hidden: [8]}
optimizer: {steps: 11, batch_size: 3, learning_rate: 0.01}
fqe: {steps: 5}
gamma: 0.5
cql_alpha: 0.25
target_update_period: 9
seed: 42
)",
                              "test.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_steps, 7);
  EXPECT_DOUBLE_EQ(c->step_reward_weight, 0.5);
  EXPECT_DOUBLE_EQ(c->final_reward_weights.at("staging"), 2);
  EXPECT_EQ(c->optimizer.steps, 11);
  EXPECT_EQ(c->optimizer.batch_size, 3);
  EXPECT_EQ(c->fqe.steps, 5);
  EXPECT_EQ(c->fqe.batch_size, 256);  // default
  EXPECT_EQ(c->target_update_period, 9);
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->single_abstain.folds, 0);  // default: no margin
  auto abstain = ParseLearnerConfig(
      "single_abstain: {folds: 5, tolerance: 0.02, max_over_modules: 1}\n",
      "abstain.yaml");
  ASSERT_TRUE(abstain.ok()) << abstain.status();
  EXPECT_EQ(abstain->single_abstain.folds, 5);
  EXPECT_DOUBLE_EQ(abstain->single_abstain.tolerance, 0.02);
  EXPECT_EQ(abstain->single_abstain.max_over_modules, 1);
  EXPECT_EQ(abstain->single_abstain.candidate_max_over_modules,
            -1);  // default: no candidate excluded
  auto excluding = ParseLearnerConfig(
      "single_abstain: {folds: 5, candidate_max_over_modules: 0}\n",
      "abstain.yaml");
  ASSERT_TRUE(excluding.ok()) << excluding.status();
  EXPECT_EQ(excluding->single_abstain.candidate_max_over_modules, 0);
}

// "" means "none" for the two text fields that have one (the header says
// so): the objective's policy, no candidates file.
TEST(LearnerConfigTest, EmptyTextMeansTheDefaultWhereDocumented) {
  auto parsed = ParseLearnerConfig(
      "policy_objective: \"\"\ncandidates_file: \"\"\nseed: "
      "18446744073709551615\n",
      "empty.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->policy_objective, parsed->objective);
  EXPECT_EQ(parsed->candidates_file, "");
  EXPECT_EQ(parsed->seed, 18446744073709551615u);
}

TEST(LearnerConfigTest, RefusesBadInputNamingTheField) {
  struct Case {
    const char* yaml;
    const char* field;
  } cases[] = {
      {"algorithm: ppo", "algorithm"},
      {"learning_rate: 1", "learning_rate"},  // unknown top-level key
      {"optimizer: {batch_size: 0}", "optimizer.batch_size"},
      {"optimizer: {learning_rate: fast}", "optimizer.learning_rate"},
      {"gamma: 1.0", "gamma"},
      {"train_split: test", "train_split"},  // held out: never trained on
      {"validation_split: test", "validation_split"},  // nor chosen on
      {"max_steps: 1001", "max_steps"},  // no artifact could carry it
      {"reward: {final_weights: {prod: 1}}", "reward.final_weights.prod"},
      {"network: {hidden: [0]}", "network.hidden"},
      {"single_abstain: {folds: 1}", "single_abstain.folds"},
      {"formulation: stepwise\nsingle_abstain: {folds: 5}",
       "single_abstain.folds"},
      {"single_abstain: {tolerance: -0.1}", "single_abstain.tolerance"},
      {"single_abstain: {folds: 5, candidate_max_over_modules: -2}",
       "single_abstain.candidate_max_over_modules"},
      {"single_abstain: {candidate_max_over_modules: 0}",  // no folds
       "single_abstain.candidate_max_over_modules"},
      {"single_abstain: {max_over_modules: -1}",
       "single_abstain.max_over_modules"},
      {"single_abstain: {fold: 5}", "single_abstain.fold"},
      {"[1, 2]", "expected a map"},
      {"formulation: [", "not valid YAML"},
      // A key that is a list (learner_config_fuzzer: it threw out of the
      // parser).
      {"? [a, b]\n: 1", "(a key that is not a name): unknown field"},
      // Each value's kind, named with what was given.
      {"max_steps: 2.5", "max_steps: expected a whole number, got \"2.5\""},
      {"network: {hidden: [64, wide]}",
       "network.hidden[1]: expected a number, got \"wide\""},
      {"network: {hidden: 64}", "network.hidden: expected a list"},
      {"reward: {final_weights: {staging: high}}",
       "reward.final_weights.staging: expected a number, got \"high\""},
      {"reward: {final_weights: [staging]}",
       "reward.final_weights: expected a mapping of names to numbers"},
      {"train_split: [a]", "train_split: expected a non-empty string"},
      {"reward: {final_weights: {staging: 1, staging: 2}}",
       "reward.final_weights.staging: given twice"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseLearnerConfig(c.yaml, "bad.yaml");
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("bad.yaml"), std::string::npos);
    EXPECT_NE(parsed.status().message().find(c.field), std::string::npos)
        << parsed.status();
    if (c.field != std::string("not valid YAML")) {
      EXPECT_NE(parsed.status().message().find(
                    "(offline_rl/learner/learner_config.h documents every "
                    "field)"),
                std::string::npos)
          << parsed.status();
    }
  }
  auto missing = LoadLearnerConfig("/nonexistent.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(
                "cannot read /nonexistent.yaml; give an existing file "
                "(configs/learner/size_candidate_cql.yaml is an example)"),
            std::string::npos)
      << missing.status();
}

}  // namespace
}  // namespace phaseloop::offline_rl
