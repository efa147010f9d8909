// The exported artifact against libtorch: the driver's forward pass
// (PolicyNetwork, Eigen, no libtorch) equals the learner's to 1e-5 on random
// inputs and on real states (features of the fixture programs, through the
// replay buffer and the dataset), for both formulations.
#include "offline_rl/learner/policy_export.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/testing/test_util.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/policy_network.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "gtest/gtest.h"
#include "llvm/IR/LLVMContext.h"
#include "offline_rl/learner/learner.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

constexpr float kTolerance = 1e-5f;

class PolicyExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_ = testing::Llvm16DatasetOptions();
  }

  static LearnerConfig Config(const std::string& formulation) {
    LearnerConfig c;
    c.formulation = formulation;
    c.algorithm = "cql";
    c.network.hidden = {64, 32};
    c.optimizer.steps = 50;
    c.optimizer.batch_size = 32;
    c.reward_scale = 100;
    c.gamma = formulation == "stepwise" ? 0.9 : 0.0;
    c.checkpoint_every = 0;
    c.seed = 5;
    c.text = "formulation: " + formulation + "\n";
    return c;
  }

  // Trains, exports, round-trips the file; returns the artifact.
  v1::PolicyArtifact TrainAndExport(const LearnerConfig& config,
                                    const Dataset& data,
                                    std::unique_ptr<Learner>* learner) {
    auto created = Learner::Create(config, data, 1);
    EXPECT_TRUE(created.ok()) << created.status();
    *learner = *std::move(created);
    EXPECT_TRUE((*learner)->Train(config.optimizer.steps, "", nullptr).ok());
    ExportInputs inputs;
    inputs.config = &config;
    inputs.data = &data;
    inputs.pass_names = options_.pass_names;
    inputs.normalization = (*learner)->normalization();
    inputs.layers = (*learner)->ExportLayers();
    // A buffer named in Latin-1: the artifact still reads back.
    inputs.training_command = "phaseloop train --buffer b\xe9.db";
    inputs.metrics = {{"validation_mean_value", 0.25}};
    auto artifact = BuildPolicyArtifact(inputs);
    EXPECT_TRUE(artifact.ok()) << artifact.status();
    const std::string path = dir_ + "/policy.plpolicy";
    EXPECT_TRUE(policy_runtime::WritePolicyArtifactFile(*artifact, path).ok());
    auto read = policy_runtime::ReadPolicyArtifactFile(path);
    EXPECT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(policy_runtime::PolicyVersionOf(*read),
              policy_runtime::PolicyVersionOf(*artifact));
    return *read;
  }

  // Max |driver - libtorch| over the rows of `states`.
  static float MaxDifference(const v1::PolicyArtifact& artifact,
                             const Learner& learner,
                             const std::vector<float>& states) {
    auto network = policy_runtime::PolicyNetwork::Create(artifact);
    EXPECT_TRUE(network.ok()) << network.status();
    const int in = network->input_dim(), out = network->output_dim();
    const std::vector<float> expected = learner.Forward(states);
    const size_t rows = states.size() / in;
    EXPECT_EQ(expected.size(), rows * out);
    float worst = 0;
    std::vector<float> got(out);
    for (size_t r = 0; r < rows; ++r) {
      network->Forward(absl::MakeConstSpan(states.data() + r * in, in),
                       absl::MakeSpan(got));
      for (int o = 0; o < out; ++o) {
        worst = std::max(worst, std::fabs(got[o] - expected[r * out + o]));
      }
    }
    return worst;
  }

  // Random raw states over the network's operating range: each feature
  // uniform within 3 training standard deviations of its mean (raw = mean +
  // u / scale), history counts 0..3.
  static std::vector<float> RandomStates(const v1::PolicyArtifact& artifact,
                                         int rows) {
    const auto& norm = artifact.normalization();
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    std::uniform_int_distribution<int> count(0, 3);
    std::vector<float> states;
    for (int r = 0; r < rows; ++r) {
      for (int i = 0; i < norm.mean_size(); ++i) {
        states.push_back(i < 127 ? norm.mean(i) + u(rng) / norm.scale(i)
                                 : static_cast<float>(count(rng)));
      }
    }
    return states;
  }

  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  DatasetOptions options_;
};

TEST_F(PolicyExportTest, CandidateArtifactMatchesLibtorch) {
  ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 30, 10, 2).ok());
  ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
  options_.candidates =
      *ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
  const LearnerConfig config = Config("candidate");
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  std::unique_ptr<Learner> learner;
  const v1::PolicyArtifact a = TrainAndExport(config, *data, &learner);

  EXPECT_EQ(a.format_version(), policy_runtime::kPolicyFormatVersion);
  EXPECT_EQ(a.objective(), "alloc_size");
  EXPECT_EQ(a.formulation(), "candidate");
  EXPECT_EQ(a.action_space_version(), "llvm-16/v1");
  EXPECT_EQ(a.action_names_size(), 122);
  EXPECT_EQ(a.action_names(47), options_.pass_names[47]);
  EXPECT_EQ(a.normalization().layout(), policy_runtime::kStateLayoutV1);
  ASSERT_EQ(a.candidates_size(), 4);
  EXPECT_EQ(a.candidates(1).name(), "c1");
  EXPECT_EQ(a.candidates(1).pipeline(),
            "function(instcombine),function(simplifycfg)");
  EXPECT_EQ(a.layers_size(), 3);
  EXPECT_EQ(a.layers(2).outputs(), 4);
  EXPECT_EQ(a.metadata().algorithm(), "cql");
  EXPECT_EQ(a.metadata().training_command(),
            "phaseloop train --buffer b\\xe9.db");
  EXPECT_EQ(a.metadata().data_snapshot(), data->snapshot);
  EXPECT_EQ(a.metadata().config(), config.text);
  EXPECT_EQ(a.metadata().seed(), 5u);
  EXPECT_DOUBLE_EQ(a.metadata().metrics().at("validation_mean_value"), 0.25);

  EXPECT_LE(MaxDifference(a, *learner, RandomStates(a, 200)), kTolerance);
  EXPECT_LE(MaxDifference(a, *learner, data->validation.table.start_states),
            kTolerance);
}

// Real states: the fixture programs' Autophase and InstCount through the
// buffer and the step-wise dataset (with action histories).
TEST_F(PolicyExportTest, StepwiseArtifactMatchesLibtorchOnFixtureStates) {
  replay_buffer::WriteBatch batch;
  llvm::LLVMContext context;
  int index = 0;
  for (const std::string& path : phaseloop::testing::FixturePaths()) {
    auto module = ir::LoadModule(path, ir::FrontendOptions(), context);
    ASSERT_TRUE(module.ok()) << module.status();
    const auto autophase = observation::ComputeAutophase(**module);
    const auto inst_count = observation::ComputeInstCount(**module);
    v1::ModuleRecord m;
    m.set_module_hash("fixture" + std::to_string(index));
    m.set_split(index % 4 == 0 ? "validation" : "train");
    batch.modules.push_back(m);
    v1::Episode e;
    e.set_episode_id("fixture-episode" + std::to_string(index));
    e.set_module_hash(m.module_hash());
    e.set_action_space_version("llvm-16/v1");
    e.set_objective("alloc_size");
    e.set_behaviour_policy("random");
    for (int t = 0; t < 4; ++t) {
      v1::Step* s = e.add_steps();
      s->set_index(t);
      s->mutable_autophase()->Add(autophase.begin(), autophase.end());
      s->mutable_inst_count()->Add(inst_count.begin(), inst_count.end());
      s->set_action((index * 7 + t * 13) % 122);
      s->set_reward(0.01 * ((index + t) % 3));
    }
    batch.episodes.push_back(e);
    ++index;
  }
  ASSERT_GE(index, 10);
  ASSERT_TRUE(store_->Write(batch).ok());
  const LearnerConfig config = Config("stepwise");
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(
      data->train.transitions.size() + data->validation.transitions.size(),
      4 * index);
  std::unique_ptr<Learner> learner;
  const v1::PolicyArtifact a = TrainAndExport(config, *data, &learner);
  EXPECT_EQ(a.formulation(), "stepwise");
  EXPECT_EQ(a.candidates_size(), 0);
  EXPECT_EQ(a.max_steps(), config.max_steps);
  EXPECT_EQ(a.layers(2).outputs(), 122);
  EXPECT_LE(MaxDifference(a, *learner, data->train.transitions.states),
            kTolerance);
  EXPECT_LE(MaxDifference(a, *learner, data->validation.transitions.states),
            kTolerance);
  EXPECT_LE(MaxDifference(a, *learner, RandomStates(a, 200)), kTolerance);
}

TEST_F(PolicyExportTest, InvalidExportRefused) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 3, 1, 1, 3, 1).ok());
  LearnerConfig config = Config("stepwise");
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok());
  ExportInputs inputs;
  inputs.config = &config;
  inputs.data = &*data;
  inputs.pass_names = options_.pass_names;  // but no layers
  inputs.normalization = ComputeNormalization(data->train.transitions);
  auto artifact = BuildPolicyArtifact(inputs);
  EXPECT_EQ(artifact.status().code(), absl::StatusCode::kInvalidArgument);
  inputs.single_excluded = {true};  // one flag, no candidates
  artifact = BuildPolicyArtifact(inputs);
  EXPECT_EQ(artifact.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(artifact.status().message().find("exclusions name 1 candidates"),
            std::string::npos)
      << artifact.status();
}

}  // namespace
}  // namespace phaseloop::offline_rl
