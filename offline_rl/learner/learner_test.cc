#include "offline_rl/learner/learner.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/policy_scores.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

std::string LayersBytes(const std::vector<v1::DenseLayer>& layers) {
  std::string bytes;
  for (const auto& l : layers) bytes += l.SerializeAsString();
  return bytes;
}

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_ = testing::Llvm16DatasetOptions();
  }

  Dataset CandidateData(const LearnerConfig& config) {
    EXPECT_TRUE(testing::WriteCandidateBuffer(*store_, 240, 60, 3).ok());
    EXPECT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
    options_.candidates =
        *ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
    auto data = BuildDataset(*store_, config, options_);
    EXPECT_TRUE(data.ok()) << data.status();
    return *std::move(data);
  }

  static LearnerConfig SmallConfig(const std::string& algorithm) {
    LearnerConfig c;
    c.algorithm = algorithm;
    c.network.hidden = {32, 32};
    c.optimizer.steps = 300;
    c.optimizer.batch_size = 64;
    c.optimizer.learning_rate = 3e-3;
    c.gamma = 0;
    c.cql_alpha = 0.5;
    c.reward_scale = 100;
    c.target_update_period = 50;
    c.log_every = 100;
    c.checkpoint_every = 0;
    c.fqe.steps = 300;
    c.fqe.batch_size = 64;
    c.fqe.learning_rate = 3e-3;
    c.seed = 11;
    return c;
  }

  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  DatasetOptions options_;
};

// Both algorithms learn to pick the best candidate of held-out modules.
TEST_F(LearnerTest, CandidateCqlAndBcLearnTheBestCandidate) {
  for (const char* algorithm : {"cql", "bc"}) {
    const LearnerConfig config = SmallConfig(algorithm);
    const Dataset data = CandidateData(config);
    auto learner = Learner::Create(config, data, 1);
    ASSERT_TRUE(learner.ok()) << learner.status();
    std::vector<TrainProgress> reports;
    ASSERT_TRUE(
        (*learner)
            ->Train(config.optimizer.steps, "",
                    [&](const TrainProgress& p) { reports.push_back(p); })
            .ok());
    ASSERT_EQ(reports.size(), 3u);
    EXPECT_EQ(reports.back().step, 300);
    EXPECT_GT(reports.back().transitions_per_second, 0);
    EXPECT_LT(reports.back().loss, reports.front().loss) << algorithm;
    const CandidateScore score = ScoreCandidateChoices(
        data.validation.table, 4,
        (*learner)->Forward(data.validation.table.start_states), 0);
    EXPECT_EQ(score.modules, 60);
    EXPECT_GE(score.best_choice_rate, 0.9) << algorithm;
    EXPECT_GT(score.mean_value, 0.04) << algorithm;
    EXPECT_NEAR(score.baseline_value, 0, 1e-9);  // oz
  }
}

// FQE of the trained greedy policy estimates what it earns on held-out
// modules (the candidate case is one-step, so this is checkable exactly).
TEST_F(LearnerTest, FittedQEvaluationMatchesTheMeasuredValue) {
  const LearnerConfig config = SmallConfig("cql");
  const Dataset data = CandidateData(config);
  auto learner = Learner::Create(config, data, 1);
  ASSERT_TRUE(learner.ok());
  ASSERT_TRUE((*learner)->Train(config.optimizer.steps, "", nullptr).ok());
  auto fqe = (*learner)->FittedQEvaluation(data.validation.transitions);
  ASSERT_TRUE(fqe.ok()) << fqe.status();
  const CandidateScore score = ScoreCandidateChoices(
      data.validation.table, 4,
      (*learner)->Forward(data.validation.table.start_states), 0);
  EXPECT_NEAR(fqe->policy_value, score.mean_value, 0.015);
  // Logged data: the mean over all candidates, well below the policy's.
  EXPECT_LT(fqe->logged_value, fqe->policy_value - 0.02);
  EXPECT_EQ(fqe->transitions, 240);
  TransitionSet empty;
  EXPECT_EQ((*learner)->FittedQEvaluation(empty).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LearnerTest, SameSeedSameWeightsOtherSeedOtherWeights) {
  LearnerConfig config = SmallConfig("cql");
  config.optimizer.steps = 60;
  const Dataset data = CandidateData(config);
  std::string first;
  for (int run = 0; run < 2; ++run) {
    auto learner = Learner::Create(config, data, 2);
    ASSERT_TRUE(learner.ok());
    ASSERT_TRUE((*learner)->Train(60, "", nullptr).ok());
    const std::string bytes = LayersBytes((*learner)->ExportLayers());
    if (run == 0)
      first = bytes;
    else
      EXPECT_EQ(bytes, first);
  }
  config.seed = 12;
  auto other = Learner::Create(config, data, 2);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->Train(60, "", nullptr).ok());
  EXPECT_NE(LayersBytes((*other)->ExportLayers()), first);
}

// 2N steps straight == N steps, checkpoint, a new process-like learner
// resumes and runs N more: bit-identical weights (model, target network,
// Adam state and data cursor all restored). Step-wise CQL, so the target
// network and the next-state path are exercised.
TEST_F(LearnerTest, ResumeContinuesExactly) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 6, 2, 2, 8, 4).ok());
  LearnerConfig config = SmallConfig("cql");
  config.formulation = "stepwise";
  config.gamma = 0.9;
  config.target_update_period = 7;  // a copy between the checkpoints
  config.checkpoint_every = 10;
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();

  auto straight = Learner::Create(config, *data, 1);
  ASSERT_TRUE(straight.ok());
  ASSERT_TRUE((*straight)->Train(40, "", nullptr).ok());

  const std::string checkpoint = dir_ + "/checkpoint.pt";
  {
    auto first = Learner::Create(config, *data, 1);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE((*first)->Train(20, checkpoint, nullptr).ok());
  }
  EXPECT_FALSE(std::ifstream(checkpoint + ".tmp").good());  // renamed away
  auto resumed = Learner::Create(config, *data, 1);
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->LoadCheckpoint(checkpoint).ok());
  EXPECT_EQ((*resumed)->step(), 20);
  ASSERT_TRUE((*resumed)->Train(40, "", nullptr).ok());
  EXPECT_EQ(LayersBytes((*resumed)->ExportLayers()),
            LayersBytes((*straight)->ExportLayers()));

  // A fresh learner that did not resume differs (the test can fail).
  auto fresh = Learner::Create(config, *data, 1);
  ASSERT_TRUE((*fresh)->Train(20, "", nullptr).ok());
  EXPECT_NE(LayersBytes((*fresh)->ExportLayers()),
            LayersBytes((*straight)->ExportLayers()));
}

TEST_F(LearnerTest, CheckpointRefusals) {
  LearnerConfig config = SmallConfig("bc");
  const Dataset data = CandidateData(config);
  auto learner = Learner::Create(config, data, 1);
  ASSERT_TRUE(learner.ok());
  const std::string checkpoint = dir_ + "/checkpoint.pt";
  EXPECT_EQ((*learner)->LoadCheckpoint(checkpoint).code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE((*learner)->Train(5, checkpoint, nullptr).ok());

  LearnerConfig other = config;
  other.seed = 99;
  auto different = Learner::Create(other, data, 1);
  ASSERT_TRUE(different.ok());
  const absl::Status refused = (*different)->LoadCheckpoint(checkpoint);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("seed"), std::string::npos);

  // Truncated: refused as DataLoss, the learner keeps its state.
  std::string bytes = phaseloop::testing::ReadFileOrEmpty(checkpoint);
  std::ofstream(checkpoint, std::ios::binary | std::ios::trunc)
      << bytes.substr(0, bytes.size() / 2);
  auto again = Learner::Create(config, data, 1);
  const absl::Status corrupt = (*again)->LoadCheckpoint(checkpoint);
  EXPECT_EQ(corrupt.code(), absl::StatusCode::kDataLoss) << corrupt;
  EXPECT_EQ((*again)->step(), 0);
}

TEST_F(LearnerTest, StepwiseBcAndCqlTrain) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 12, 4, 3, 6, 8).ok());
  for (const char* algorithm : {"bc", "cql"}) {
    LearnerConfig config = SmallConfig(algorithm);
    config.formulation = "stepwise";
    config.gamma = 0.9;
    auto data = BuildDataset(*store_, config, options_);
    ASSERT_TRUE(data.ok()) << data.status();
    auto learner = Learner::Create(config, *data, 1);
    ASSERT_TRUE(learner.ok());
    double first = -1, last = -1;
    ASSERT_TRUE((*learner)
                    ->Train(300, "",
                            [&](const TrainProgress& p) {
                              if (first < 0) first = p.loss;
                              last = p.loss;
                              EXPECT_TRUE(std::isfinite(p.loss));
                            })
                    .ok());
    EXPECT_LT(last, first) << algorithm;
    const auto layers = (*learner)->ExportLayers();
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0].inputs(), 127 + 122);
    EXPECT_EQ(layers[2].outputs(), 122);
    EXPECT_EQ(layers[0].activation(), v1::DenseLayer::RELU);
    EXPECT_EQ(layers[2].activation(), v1::DenseLayer::IDENTITY);
    // BC of the best sequences: the demonstrated (good) actions are
    // recovered on the training demonstrations.
    if (std::string(algorithm) == "bc") {
      EXPECT_GT(ActionAgreement(
                    data->train.demonstrations,
                    (*learner)->Forward(data->train.demonstrations.states)),
                0.5);
    }
  }
}

// The loop answers production: a speed policy's canary run that rolled back
// (a negative final reward) turns the retrained policy away from the
// candidate it ran on those modules, which the runtime search had found
// best; a promoted run (a positive reward) keeps it.
TEST_F(LearnerTest, ARolledBackCanaryRunTurnsThePolicyAwayFromItsChoice) {
  const std::vector<std::string> pipelines = {"default<O3>", "default<O2>",
                                              "default<O1>,default<O3>",
                                              "default<O3>,default<O3>"};
  for (size_t c = 0; c < pipelines.size(); ++c) {
    options_.candidates.push_back({"p" + std::to_string(c), {}, pipelines[c]});
  }
  LearnerConfig config = SmallConfig("cql");
  config.objective = "runtime";
  config.policy_objective = "runtime";
  config.validation_split = "";
  config.step_reward_weight = 0;
  config.final_reward_weights = {{"staging", 1.0}, {"canary", 1.0}};
  // Final rewards as canary/controller makes them: promoted max(r, 0) +
  // 0.01, rolled back min(r, 0) - 0.1.
  std::map<double, double> chose_p1;  // reward -> share of kind-0 modules
  for (const double reward : {0.02, -0.12}) {
    auto store = replay_buffer::OpenReplayStore(
        dir_ + "/buffer" + std::to_string(chose_p1.size()) + ".db");
    ASSERT_TRUE(store.ok()) << store.status();
    // Kind 0's best pipeline is p1 (+0.04 against -0.02 for the others).
    ASSERT_TRUE(
        testing::WriteRuntimeSearchBuffer(**store, pipelines, 90, 0, 3).ok());
    // The policy under canary ran p1 on kind 0 and kept -O3 elsewhere.
    std::set<std::string> kind0;
    ASSERT_TRUE(
        testing::WriteCanaryRun(**store, "train", "1", "build-1", reward,
                                [&](const std::string& module_hash, int kind) {
                                  if (kind != 0) return pipelines[0];
                                  kind0.insert(module_hash);
                                  return pipelines[1];
                                })
            .ok());
    ASSERT_GT(kind0.size(), 10u);
    auto data = BuildDataset(**store, config, options_);
    ASSERT_TRUE(data.ok()) << data.status();
    ASSERT_EQ(data->train.canary_runs, 1);
    auto learner = Learner::Create(config, *data, 1);
    ASSERT_TRUE(learner.ok()) << learner.status();
    ASSERT_TRUE((*learner)->Train(config.optimizer.steps, "", nullptr).ok());
    const CandidateTable& t = data->train.table;
    const std::vector<float> q = (*learner)->Forward(t.start_states);
    int p1 = 0;
    for (size_t m = 0; m < t.module_hashes.size(); ++m) {
      if (kind0.count(t.module_hashes[m]) == 0) continue;
      const float* row = q.data() + m * 4;
      p1 += std::max_element(row, row + 4) - row == 1;
    }
    chose_p1[reward] = static_cast<double>(p1) / kind0.size();
  }
  EXPECT_GE(chose_p1[0.02], 0.9) << "promoted";
  EXPECT_LE(chose_p1[-0.12], 0.1) << "rolled back";
}

}  // namespace
}  // namespace phaseloop::offline_rl
