#include "offline_rl/learner/train_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/test_buffers.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl {
namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

// Parses `args` like phaseloop-train's main and runs the command.
Result RunTrainArgs(std::vector<std::string> args) {
  CLI::App app;
  TrainFlags flags;
  AddTrainFlags(app, flags);
  flags.args = args;
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  Result r;
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    r.code = 2;
    r.err = e.what();
    return r;
  }
  std::ostringstream out, err;
  r.code = RunTrain(flags, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

class TrainCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    buffer_ = dir_ + "/buffer.db";
    auto store = replay_buffer::OpenReplayStore(buffer_);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(testing::WriteCandidateBuffer(**store, 120, 40, 1).ok());
    ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/candidates.json").ok());
  }

  std::string WriteConfig(const std::string& name, int steps,
                          const std::string& extra = "") {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << extra << "formulation: candidate\nalgorithm: cql\n"
                        << "candidates_file: " << dir_ << "/candidates.json\n"
                        << "reward: {scale: 100}\n"
                        << "network: {hidden: [32, 32]}\n"
                        << "optimizer: {steps: " << steps
                        << ", batch_size: 64, learning_rate: 0.003}\n"
                        << "gamma: 0\ncql_alpha: 0.5\ncheckpoint_every: 50\n"
                        << "log_every: 50\nfqe: {steps: 200, batch_size: 64,"
                        << " learning_rate: 0.003}\nseed: 4\n";
    return path;
  }

  std::string dir_;
  std::string buffer_;
};

TEST_F(TrainCommandTest, ABadSigningKeyIsRefusedBeforeAnyTraining) {
  const std::string config = WriteConfig("cql.yaml", 300);
  const std::string out = dir_ + "/policy.plpolicy";
  const std::string key = dir_ + "/policy-signing.key";
  std::ofstream(key) << "phaseloop-signing-key v1\nkey_id 0123456789abcdef\n"
                     << "seed 00112233\n";  // truncated
  const Result r = RunTrainArgs({"--buffer", buffer_, "--config", config,
                                 "--out", out, "--signing-key", key});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--signing-key: signing key file '" + key + "' line 3"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("transitions/s"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".sig"));
}

TEST_F(TrainCommandTest, TrainsAndExportsWithMetadataAndProgress) {
  const std::string config = WriteConfig("cql.yaml", 300);
  const std::string out = dir_ + "/policy.plpolicy";
  const Result r = RunTrainArgs({"--buffer", buffer_, "--config", config,
                                 "--out", out, "--threads", "2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("transitions/s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("step     300/300"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  auto artifact = policy_runtime::ReadPolicyArtifactFile(out);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_EQ(j["policy_version"], policy_runtime::PolicyVersionOf(*artifact));
  EXPECT_EQ(artifact->formulation(), "candidate");
  EXPECT_EQ(artifact->candidates_size(), 4);
  const auto& m = artifact->metadata();
  EXPECT_EQ(m.training_command(), "phaseloop train --buffer " + buffer_ +
                                      " --config " + config + " --out " + out +
                                      " --threads 2 --json");
  EXPECT_EQ(m.seed(), 4u);
  EXPECT_NE(m.config().find("cql_alpha: 0.5"), std::string::npos);
  EXPECT_NE(m.data_snapshot().find("train: 480 episodes"), std::string::npos)
      << m.data_snapshot();
  EXPECT_GE(m.metrics().at("validation_best_choice_rate"), 0.9);
  EXPECT_GT(m.metrics().at("validation_mean_value"),
            m.metrics().at("validation_oz_value"));
  EXPECT_NEAR(m.metrics().at("fqe_policy_value"),
              m.metrics().at("validation_mean_value"), 0.02);
  EXPECT_EQ(j["metrics"]["validation_modules"], 40);

  // --seed overrides the config's and changes the weights.
  const Result other =
      RunTrainArgs({"--buffer", buffer_, "--config", config, "--out",
                    dir_ + "/other.plpolicy", "--threads", "2", "--seed", "9"});
  ASSERT_EQ(other.code, 0) << other.err;
  auto second =
      policy_runtime::ReadPolicyArtifactFile(dir_ + "/other.plpolicy");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->metadata().seed(), 9u);
  EXPECT_NE(second->layers(0).SerializeAsString(),
            artifact->layers(0).SerializeAsString());
}

// The user's own topk builds, shipped to the buffer as decision records,
// are training data of the next size policy: the training run says how
// many of its modules came from them.
TEST_F(TrainCommandTest, LearnsFromTheUsersTopkBuilds) {
  {
    auto store = replay_buffer::OpenReplayStore(buffer_);
    ASSERT_TRUE(store.ok());
    auto episodes = (*store)->ReadEpisodes({"m0-oz"});
    ASSERT_TRUE(episodes.ok() && episodes->size() == 1u);
    const v1::Step& s = (*episodes)[0].steps(0);
    replay_buffer::WriteBatch batch;
    for (int i = 0; i < 3; ++i) {
      v1::Decision d;
      d.set_decision_id("ci/" + std::to_string(i));
      d.set_outcome(v1::OPTIMIZED);
      d.set_opt_level("Oz");
      d.set_module_hash("service-" + std::to_string(i));
      *d.mutable_autophase() = s.autophase();
      *d.mutable_inst_count() = s.inst_count();
      d.set_inst_count(0, s.inst_count(0) + 100 * (i + 1));
      d.set_oz_alloc_size(2000);
      d.set_pipeline("function(gvn)");
      d.set_alloc_size(1800);
      for (const auto& [pipeline, bytes] :
           std::vector<std::pair<std::string, int64_t>>{
               {"default<Oz>", 2000}, {"function(gvn)", 1800}}) {
        v1::MeasuredPipeline* m = d.add_topk_measured();
        m->set_pipeline(pipeline);
        m->set_value(bytes);
      }
      batch.decisions.push_back(d);
    }
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  const std::string config =
      WriteConfig("cql.yaml", 100, "objective: alloc_size\n");
  const std::string out = dir_ + "/policy.plpolicy";
  const Result r = RunTrainArgs({"--buffer", buffer_, "--config", config,
                                 "--out", out, "--threads", "2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metrics"]["train_topk_modules"], 3) << r.out;
  EXPECT_EQ(j["metrics"]["train_topk_decisions"], 3) << r.out;
  auto artifact = policy_runtime::ReadPolicyArtifactFile(out);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_NE(artifact->metadata().data_snapshot().find(
                "your builds: 3 modules from 3 topk decisions"),
            std::string::npos)
      << artifact->metadata().data_snapshot();
}

// Train N steps with checkpoints, then resume to 2N: the same weights as
// 2N steps straight.
TEST_F(TrainCommandTest, ResumeFromCheckpointDirEqualsStraightRun) {
  const std::string half = WriteConfig("half.yaml", 100);
  const std::string full = WriteConfig("full.yaml", 200);
  const std::string ckpt = dir_ + "/ckpt";
  ASSERT_EQ(RunTrainArgs({"--buffer", buffer_, "--config", half, "--out",
                          dir_ + "/half.plpolicy", "--checkpoint-dir", ckpt})
                .code,
            0);
  EXPECT_TRUE(std::filesystem::exists(ckpt + "/checkpoint.pt"));
  const Result resumed = RunTrainArgs({"--buffer", buffer_, "--config", full,
                                       "--out", dir_ + "/resumed.plpolicy",
                                       "--checkpoint-dir", ckpt, "--resume"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resumed at step 100"), std::string::npos);
  ASSERT_EQ(RunTrainArgs({"--buffer", buffer_, "--config", full, "--out",
                          dir_ + "/straight.plpolicy"})
                .code,
            0);
  auto a = policy_runtime::ReadPolicyArtifactFile(dir_ + "/resumed.plpolicy");
  auto b = policy_runtime::ReadPolicyArtifactFile(dir_ + "/straight.plpolicy");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->layers_size(), b->layers_size());
  for (int i = 0; i < a->layers_size(); ++i) {
    EXPECT_EQ(a->layers(i).SerializeAsString(),
              b->layers(i).SerializeAsString());
  }
}

// single_abstain: the margin is cross-fitted on the training modules and
// written into the artifact, with its held-out and validation figures.
TEST_F(TrainCommandTest, CrossFitsTheSingleAbstainMarginIntoTheArtifact) {
  const std::string config = WriteConfig(
      "abstain.yaml", 200, "single_abstain: {folds: 3, tolerance: 0.01}\n");
  const std::string out = dir_ + "/abstain.plpolicy";
  const std::string crossfit = dir_ + "/crossfit.json";
  const Result r =
      RunTrainArgs({"--buffer", buffer_, "--config", config, "--out", out,
                    "--json", "--crossfit-out", crossfit});
  ASSERT_EQ(r.code, 0) << r.err;
  // The out-of-fold table behind the margin, for analysis.
  std::ifstream crossfit_in(crossfit);
  const nlohmann::json table = nlohmann::json::parse(crossfit_in);
  EXPECT_EQ(table["candidates"].size(), 4u);
  ASSERT_EQ(table["modules"].size(), 120u);
  EXPECT_EQ(table["modules"][0]["scores"].size(), 4u);
  EXPECT_EQ(table["modules"][0]["object_sizes"].size(), 4u);
  EXPECT_NE(r.err.find("fold 3/3 scored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("held-out alloc_oz_ratio"), std::string::npos) << r.err;
  auto artifact = policy_runtime::ReadPolicyArtifactFile(out);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const auto& m = artifact->metadata().metrics();
  EXPECT_FLOAT_EQ(artifact->single_abstain_margin(),
                  static_cast<float>(m.at("single_abstain_margin")));
  EXPECT_EQ(m.at("crossfit_modules"), 120);
  // The buffer's best candidate is 5 % smaller than -Oz and learnable: the
  // held-out picks keep most of that and none is over 1 %.
  EXPECT_EQ(m.at("crossfit_over_tolerance"), 0);
  EXPECT_GT(m.at("crossfit_alloc_oz_ratio"), 1.03);
  EXPECT_GT(m.at("crossfit_switched"), 100);
  EXPECT_GT(m.at("validation_single_alloc_oz_ratio"), 1.03);
  EXPECT_EQ(m.at("validation_single_over_tolerance"), 0);
  for (const auto& c : artifact->candidates())
    EXPECT_FALSE(c.single_excluded());
  EXPECT_EQ(m.count("single_excluded_candidates"), 0u);

  // Every candidate but -Oz is 2.5 % larger than -Oz on two thirds of the
  // modules: excluded from single with candidate_max_over_modules 0, in
  // the artifact and, fold by fold, in the held-out figures.
  const std::string excluding =
      WriteConfig("excluding.yaml", 200,
                  "single_abstain: {folds: 3, tolerance: 0.01, "
                  "candidate_max_over_modules: 0}\n");
  const std::string excluded_out = dir_ + "/excluding.plpolicy";
  const Result ex = RunTrainArgs(
      {"--buffer", buffer_, "--config", excluding, "--out", excluded_out});
  ASSERT_EQ(ex.code, 0) << ex.err;
  EXPECT_NE(ex.err.find("3 of 4 candidates excluded"), std::string::npos)
      << ex.err;
  auto excluded_artifact = policy_runtime::ReadPolicyArtifactFile(excluded_out);
  ASSERT_TRUE(excluded_artifact.ok()) << excluded_artifact.status();
  const int oz = policy_runtime::OzCandidateIndex(*excluded_artifact);
  ASSERT_GE(oz, 0);
  for (int c = 0; c < excluded_artifact->candidates_size(); ++c) {
    EXPECT_EQ(excluded_artifact->candidates(c).single_excluded(), c != oz) << c;
  }
  EXPECT_EQ(excluded_artifact->format_version(),
            policy_runtime::kPolicyFormatVersionSingleExcluded);
  EXPECT_EQ(artifact->format_version(), policy_runtime::kPolicyFormatVersion);
  const auto& em = excluded_artifact->metadata().metrics();
  EXPECT_EQ(em.at("single_excluded_candidates"), 3);
  EXPECT_EQ(em.at("crossfit_switched"), 0);
  EXPECT_EQ(em.at("validation_single_alloc_oz_ratio"), 1);

  // Without the -Oz candidate there is nothing to abstain to.
  std::ofstream(dir_ + "/no_oz.json") << R"json({"candidates": [
    {"name": "c1", "actions": ["instcombine"], "pipeline": "function(instcombine)"},
    {"name": "c2", "actions": [3], "pipeline": "function(sroa)"}]})json";
  const Result no_oz = RunTrainArgs({"--buffer", buffer_, "--config", config,
                                     "--out", dir_ + "/no_oz.plpolicy",
                                     "--candidates", dir_ + "/no_oz.json"});
  EXPECT_EQ(no_oz.code, 2);
  EXPECT_NE(no_oz.err.find("-Oz candidate"), std::string::npos) << no_oz.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/no_oz.plpolicy"));
}

TEST_F(TrainCommandTest, BadInputIsExitCodeTwoWithAClearMessage) {
  const std::string config = WriteConfig("cql.yaml", 10);
  const std::string out = dir_ + "/p.plpolicy";
  Result r = RunTrainArgs(
      {"--buffer", dir_ + "/missing.db", "--config", config, "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
  r = RunTrainArgs(
      {"--buffer", buffer_, "--config", dir_ + "/none.yaml", "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("none.yaml"), std::string::npos) << r.err;
  r = RunTrainArgs(
      {"--buffer", buffer_, "--config", config, "--out", out, "--resume"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--checkpoint-dir"), std::string::npos) << r.err;
  r = RunTrainArgs({"--buffer", buffer_, "--config", config, "--out", out,
                    "--candidates", dir_ + "/nope.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.json"), std::string::npos) << r.err;
  r = RunTrainArgs({"--buffer", buffer_, "--config", config, "--out", out,
                    "--gate-corpus", dir_});
  EXPECT_EQ(r.code, 2);
  // Outputs over inputs, directories and empty paths are refused before
  // any training (a review found --out BUFFER replacing the buffer, exit 0).
  const std::string buffer_bytes = phaseloop::testing::ReadFileOrEmpty(buffer_);
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{
           {"--out", buffer_},
           {"--out", config},
           {"--out", out, "--crossfit-out", out},
           {"--out", out, "--crossfit-out", buffer_},
           {"--out", dir_},
           {"--out", ""},
           {"--out", dir_ + "/no/such/dir/p.plpolicy"},
           {"--out", out, "--gate-corpus", dir_, "--gate-against",
            dir_ + "/missing.plpolicy"},
           {"--out", out, "--gate-corpus", dir_ + "/missing", "--gate-against",
            config}}) {
    std::vector<std::string> args = {"--buffer", buffer_, "--config", config};
    args.insert(args.end(), extra.begin(), extra.end());
    r = RunTrainArgs(args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(extra, " ") << ": " << r.err;
    EXPECT_EQ(r.err.find("transitions/s"), std::string::npos) << r.err;
  }
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(buffer_), buffer_bytes);
  r = RunTrainArgs({"--buffer", buffer_, "--config", config, "--out", buffer_});
  EXPECT_NE(r.err.find("--out " + buffer_ + " is --buffer's file"),
            std::string::npos)
      << r.err;
  // A checkpoint a fresh run would overwrite.
  std::filesystem::create_directories(dir_ + "/ckpt");
  std::ofstream(dir_ + "/ckpt/checkpoint.pt") << "x";
  r = RunTrainArgs({"--buffer", buffer_, "--config", config, "--out", out,
                    "--checkpoint-dir", dir_ + "/ckpt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("pass --resume"), std::string::npos) << r.err;
  // A buffer without stepwise episodes for a stepwise config.
  const std::string stepwise = dir_ + "/stepwise.yaml";
  std::ofstream(stepwise) << "formulation: stepwise\n";
  r = RunTrainArgs({"--buffer", buffer_, "--config", stepwise, "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no transitions"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A speed policy from runtime-search episodes: it learns which pipeline
// wins for which kind of module, is a runtime artifact, and is written only
// through its gate (or --ungated, for inspection).
TEST_F(TrainCommandTest, SpeedPolicyFromRuntimeSearchEpisodes) {
  const std::string buffer = dir_ + "/runtime.db";
  const std::vector<std::string> pipelines = {"default<O3>", "default<O2>",
                                              "default<O1>,default<O3>",
                                              "default<O3>,default<O3>"};
  {
    auto store = replay_buffer::OpenReplayStore(buffer);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(
        testing::WriteRuntimeSearchBuffer(**store, pipelines, 90, 30, 2).ok());
  }
  nlohmann::json candidates;
  for (size_t c = 0; c < pipelines.size(); ++c) {
    candidates["candidates"].push_back(
        {{"name", "p" + std::to_string(c)}, {"pipeline", pipelines[c]}});
  }
  std::ofstream(dir_ + "/speed.json") << candidates.dump();
  const std::string config = dir_ + "/speed.yaml";
  std::ofstream(config)
      << "formulation: candidate\nalgorithm: cql\nobjective: runtime\n"
      << "validation_split: validation\ncandidates_file: " << dir_
      << "/speed.json\nreward: {step_weight: 0, scale: 100, "
      << "final_weights: {staging: 1, canary: 1}}\nnetwork: {hidden: [32, "
         "32]}\n"
      << "optimizer: {steps: 300, batch_size: 64, learning_rate: 0.003}\n"
      << "gamma: 0\ncql_alpha: 0.5\nlog_every: 100\nseed: 3\n";
  const std::string out = dir_ + "/speed.plpolicy";

  Result r =
      RunTrainArgs({"--buffer", buffer, "--config", config, "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gate-workloads test"), std::string::npos) << r.err;
  // The gate needs workloads of the split: an empty directory has none,
  // and that is said before any training.
  std::filesystem::create_directories(dir_ + "/no-workloads");
  r = RunTrainArgs({"--buffer", buffer, "--config", config, "--out", out,
                    "--gate-workloads", "test", "--gate-workloads-dir",
                    dir_ + "/no-workloads"});
  EXPECT_EQ(r.err.find("step "), std::string::npos) << r.err;
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no workload of split 'test'"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Size gates and speed gates do not mix.
  r = RunTrainArgs({"--buffer", buffer_, "--config", WriteConfig("s.yaml", 10),
                    "--out", out, "--ungated"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gate-corpus"), std::string::npos) << r.err;

  r = RunTrainArgs(
      {"--buffer", buffer, "--config", config, "--out", out, "--ungated"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto artifact = policy_runtime::ReadPolicyArtifactFile(out);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_EQ(artifact->objective(), "runtime");
  EXPECT_EQ(artifact->candidates_size(), 4);
  const auto& m = artifact->metadata();
  EXPECT_NE(m.data_snapshot().find("train: 270 episodes"), std::string::npos)
      << m.data_snapshot();
  // Held-out modules: it picks the pipeline that wins for their kind.
  EXPECT_GE(m.metrics().at("validation_best_choice_rate"), 0.9);
  EXPECT_GT(m.metrics().at("validation_mean_value"), 0.03);

  // Exploration in canaries: none before a canary judged anything.
  const std::string explored = dir_ + "/explored.plpolicy";
  r = RunTrainArgs({"--buffer", buffer, "--config", config, "--out", explored,
                    "--ungated", "--explore-untried", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_FALSE(summary["exploration"]["exploring"].get<bool>());
  EXPECT_NE(r.err.find("exploration: no canary has judged"), std::string::npos)
      << r.err;
  // A canary judged the winner (p1) of five kind-0 training modules: the
  // policy's choice there is one production judged, so it tries another.
  {
    auto store = replay_buffer::OpenReplayStore(buffer);
    ASSERT_TRUE(store.ok());
    int left = 5;
    ASSERT_TRUE(testing::WriteCanaryRun(**store, "train", "1", "b1", 0.03,
                                        [&](const std::string&, int kind) {
                                          return kind == 0 && left-- > 0
                                                     ? pipelines[1]
                                                     : "";
                                        })
                    .ok());
  }
  const std::string greedy = dir_ + "/greedy.plpolicy";
  r = RunTrainArgs(
      {"--buffer", buffer, "--config", config, "--out", greedy, "--ungated"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = RunTrainArgs({"--buffer", buffer, "--config", config, "--out", explored,
                    "--ungated", "--explore-untried", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  summary = nlohmann::json::parse(r.out);
  const auto& e = summary["exploration"];
  ASSERT_TRUE(e["exploring"].get<bool>()) << e.dump();
  EXPECT_EQ(e["modules"], 5);
  const std::string tried = e["pipeline"];
  EXPECT_TRUE(tried == pipelines[2] || tried == pipelines[3]) << tried;
  // The same network as the greedy policy's, with one output raised.
  auto g = policy_runtime::ReadPolicyArtifactFile(greedy);
  auto x = policy_runtime::ReadPolicyArtifactFile(explored);
  ASSERT_TRUE(g.ok() && x.ok());
  ASSERT_EQ(g->layers_size(), x->layers_size());
  const int last = g->layers_size() - 1;
  for (int l = 0; l < last; ++l) {
    EXPECT_EQ(g->layers(l).SerializeAsString(),
              x->layers(l).SerializeAsString());
  }
  const int c = tried == pipelines[2] ? 2 : 3;
  for (int o = 0; o < 4; ++o) {
    const float raised = x->layers(last).bias(o) - g->layers(last).bias(o);
    if (o == c) {
      EXPECT_NEAR(raised, e["bias"].get<double>() * 100, 1e-3);
      EXPECT_GT(raised, 0);
    } else {
      EXPECT_EQ(raised, 0) << o;
    }
  }
  EXPECT_EQ(x->metadata().metrics().at("explore_candidate"), c);
  // Size policies are not canaried.
  r = RunTrainArgs({"--buffer", buffer_, "--config", WriteConfig("s2.yaml", 10),
                    "--out", out, "--explore-untried"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--explore-untried is for speed policies"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace phaseloop::offline_rl
