// The train pipeline's steps one at a time (train_command_test and
// train_gate_test run them all through RunTrain).
#include "offline_rl/learner/train_pipeline.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "common/files/atomic_file.h"
#include "common/signing/signature.h"
#include "common/signing/test_keys.h"
#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/test_buffers.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/corpus/fixture_corpus.h"

namespace phaseloop::offline_rl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TrainPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(testing::WriteCandidateBuffer(**store, 40, 10, 1).ok());
    ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/candidates.json").ok());
    std::ofstream(dir_ + "/config.yaml")
        << "formulation: candidate\nalgorithm: cql\nnetwork: {hidden: [8]}\n"
        << "optimizer: {steps: 20, batch_size: 16}\ncheckpoint_every: 0\n"
        << "log_every: 10\nfqe: {steps: 0}\nseed: 4\n";
    flags_.buffer = dir_ + "/buffer.db";
    flags_.config = dir_ + "/config.yaml";
    flags_.candidates = dir_ + "/candidates.json";
    flags_.out = dir_ + "/policy.plpolicy";
    flags_.args = {"--out", flags_.out};
  }

  // Loaded, trained and measured with flags_, ready to export (on the heap:
  // the network refers to the training data).
  struct Trained {
    TrainingData training;
    TrainedNetwork network;
    PolicyMeasures measures;
  };
  absl::StatusOr<std::unique_ptr<Trained>> TrainAndMeasure() {
    std::ostringstream err;
    auto t = std::make_unique<Trained>();
    auto loaded = LoadTrainingData(flags_, err);
    if (!loaded.ok()) return loaded.status();
    t->training = *std::move(loaded);
    auto trained = TrainNetwork(t->training, flags_, err);
    if (!trained.ok()) return trained.status();
    t->network = *std::move(trained);
    auto measures = MeasurePolicy(t->training, t->network, flags_, err);
    if (!measures.ok()) return measures.status();
    t->measures = *std::move(measures);
    return t;
  }

  // Loads, trains, measures and exports with flags_: the artifact written.
  absl::StatusOr<ExportedPolicy> TrainAndExport(TrainingData* training) {
    std::ostringstream err;
    auto loaded = LoadTrainingData(flags_, err);
    if (!loaded.ok()) return loaded.status();
    *training = *std::move(loaded);
    auto trained = TrainNetwork(*training, flags_, err);
    if (!trained.ok()) return trained.status();
    auto measures = MeasurePolicy(*training, *trained, flags_, err);
    if (!measures.ok()) return measures.status();
    return ExportPolicy(*training, *trained, *measures, flags_);
  }

  std::string ReadOut() const {
    std::string content;
    EXPECT_TRUE(files::ReadWholeFile(flags_.out, &content).ok());
    return content;
  }

  std::string dir_;
  TrainFlags flags_;
};

TEST_F(TrainPipelineTest, LoadTrainingDataReadsConfigCandidatesAndBuffer) {
  flags_.seed = 9;
  std::ostringstream err;
  auto training = LoadTrainingData(flags_, err);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_EQ(training->config.seed, 9u);  // --seed over the config's 4
  EXPECT_EQ(training->options.candidates.size(), 4u);
  EXPECT_FALSE(training->options.pass_names.empty());
  EXPECT_EQ(training->data.train.table.module_hashes.size(), 40u);
  EXPECT_EQ(training->data.validation.table.module_hashes.size(), 10u);
  EXPECT_EQ(err.str(), "phaseloop train: cql candidate alloc_size; " +
                           training->data.snapshot + "\n");
}

TEST_F(TrainPipelineTest, LoadTrainingDataErrorsNameTheBadInput) {
  struct Case {
    std::string what;
    TrainFlags flags;
    std::string named;
  };
  std::vector<Case> cases;
  cases.push_back({"config", flags_, "none.yaml"});
  cases.back().flags.config = dir_ + "/none.yaml";
  cases.push_back({"buffer", flags_, "missing.db"});
  cases.back().flags.buffer = dir_ + "/missing.db";
  cases.push_back({"candidates", flags_, "nope.json"});
  cases.back().flags.candidates = dir_ + "/nope.json";
  std::ofstream(dir_ + "/stepwise.yaml") << "formulation: stepwise\n";
  cases.push_back({"data", flags_, "no transitions"});
  cases.back().flags.config = dir_ + "/stepwise.yaml";
  for (const Case& c : cases) {
    std::ostringstream err;
    auto training = LoadTrainingData(c.flags, err);
    ASSERT_FALSE(training.ok()) << c.what;
    EXPECT_THAT(std::string(training.status().message()), HasSubstr(c.named))
        << c.what;
    EXPECT_NE(training.status().code(), absl::StatusCode::kInternal) << c.what;
    EXPECT_EQ(err.str(), "") << c.what;  // no progress line on failure
  }
}

TEST_F(TrainPipelineTest, TrainNetworkNamesACheckpointDirItCannotCreate) {
  std::ostringstream err;
  auto training = LoadTrainingData(flags_, err);
  ASSERT_TRUE(training.ok()) << training.status();
  std::ofstream(dir_ + "/a_file") << "x";
  flags_.checkpoint_dir = dir_ + "/a_file/ckpt";
  auto trained = TrainNetwork(*training, flags_, err);
  ASSERT_FALSE(trained.ok());
  EXPECT_EQ(trained.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(trained.status().message()),
      HasSubstr("cannot create --checkpoint-dir " + flags_.checkpoint_dir));
}

TEST_F(TrainPipelineTest, WithoutAGateExportWritesOutAndPublishIsANoOp) {
  TrainingData training;
  auto export_result = TrainAndExport(&training);
  ASSERT_TRUE(export_result.ok()) << export_result.status();
  const ExportedPolicy& exported = *export_result;
  EXPECT_EQ(exported.path, flags_.out);
  EXPECT_EQ(ReadOut(),
            policy_runtime::SerializePolicyArtifactFile(exported.artifact));
  EXPECT_EQ(exported.artifact.metadata().training_command(),
            "phaseloop train --out " + flags_.out);
  auto published = GateAndPublish(exported, training.config, flags_);
  ASSERT_TRUE(published.ok()) << published.status();
  EXPECT_TRUE(published->published);
  EXPECT_FALSE(published->gate.has_value());
  EXPECT_EQ(ReadOut(),
            policy_runtime::SerializePolicyArtifactFile(exported.artifact));
}

// A speed policy's gate stages it for minutes: the review found it written
// straight to --out first (a run stopped meanwhile left an ungated policy
// there, a refusal deleted the policy --out held). It waits beside --out.
TEST_F(TrainPipelineTest, ASpeedPolicyWaitsForItsGateBesideOut) {
  std::ofstream(flags_.out) << "the current policy";
  auto t = TrainAndMeasure();
  ASSERT_TRUE(t.ok()) << t.status();
  (*t)->training.config.policy_objective = kObjectiveRuntime;
  auto exported =
      ExportPolicy((*t)->training, (*t)->network, (*t)->measures, flags_);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->path, flags_.out + ".gate.tmp");
  EXPECT_EQ(ReadOut(), "the current policy");
  fs::remove(exported->path);
  flags_.ungated = true;  // --ungated: nothing to wait for
  exported =
      ExportPolicy((*t)->training, (*t)->network, (*t)->measures, flags_);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->path, flags_.out);
}

// The gate cannot run (no corpus there): the temp file goes, --out stays.
TEST_F(TrainPipelineTest, AGateThatCannotRunLeavesOutUntouched) {
  std::ofstream(flags_.out) << "the current policy";
  flags_.gate_corpus = dir_ + "/no_corpus";
  flags_.gate_against = "baseline";
  TrainingData training;
  auto export_result = TrainAndExport(&training);
  ASSERT_TRUE(export_result.ok()) << export_result.status();
  const ExportedPolicy& exported = *export_result;
  EXPECT_EQ(exported.path, flags_.out + ".gate.tmp");
  EXPECT_TRUE(fs::exists(exported.path));
  EXPECT_EQ(ReadOut(), "the current policy");
  auto published = GateAndPublish(exported, training.config, flags_);
  ASSERT_FALSE(published.ok());
  EXPECT_THAT(std::string(published.status().message()),
              HasSubstr("publish gate, new policy"));
  EXPECT_FALSE(fs::exists(exported.path));
  EXPECT_EQ(ReadOut(), "the current policy");
}

// A real corpus on which the new policy only ties -Oz: refused, the temp
// file removed, the existing --out byte for byte as it was.
TEST_F(TrainPipelineTest, ARefusedPolicyLeavesOutUntouched) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path base = fs::path(tmp != nullptr ? tmp : "/tmp") / "gate";
  auto built = corpus::BuildFixtureCorpus(base.string(), {"sorting", "bits"});
  ASSERT_TRUE(built.ok()) << built.status();
  // Every candidate is -Oz: whatever the policy picks compiles like -Oz.
  std::ofstream(flags_.candidates) << R"json([
    {"name": "oz", "pipeline": "default<Oz>"},
    {"name": "c1", "pipeline": "default<Oz>"},
    {"name": "c2", "pipeline": "default<Oz>"},
    {"name": "c3", "pipeline": "default<Oz>"}])json";
  std::ofstream(flags_.out) << "the current policy";
  flags_.gate_corpus = (base / "corpus").string();
  flags_.gate_against = "baseline";
  flags_.gate_split = "";
  TrainingData training;
  auto export_result = TrainAndExport(&training);
  ASSERT_TRUE(export_result.ok()) << export_result.status();
  const ExportedPolicy& exported = *export_result;
  auto published = GateAndPublish(exported, training.config, flags_);
  ASSERT_TRUE(published.ok()) << published.status();
  EXPECT_FALSE(published->published);
  ASSERT_TRUE(published->gate.has_value());
  EXPECT_FALSE(published->gate->passed);
  EXPECT_EQ(published->gate->metric, "alloc_oz_ratio");
  EXPECT_DOUBLE_EQ(published->gate->candidate_score, 1.0);
  EXPECT_EQ(published->gate->modules, 2);
  EXPECT_FALSE(fs::exists(exported.path));
  EXPECT_EQ(ReadOut(), "the current policy");
}

}  // namespace
}  // namespace phaseloop::offline_rl

namespace phaseloop::offline_rl {
namespace {

using signing::testing::TestKey;

TEST_F(TrainPipelineTest, ASigningKeySignsTheArtifactBeforeItLands) {
  auto t = TrainAndMeasure();
  ASSERT_TRUE(t.ok()) << t.status();
  const signing::SigningKey key = TestKey(5);
  auto exported =
      ExportPolicy((*t)->training, (*t)->network, (*t)->measures, flags_, &key);
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_TRUE(
      GateAndPublish(*exported, (*t)->training.config, flags_, &key).ok());
  const std::string sig = phaseloop::testing::ReadFileOrEmpty(
      signing::SignaturePathFor(flags_.out));
  absl::StatusOr<std::string> signer = signing::VerifyArtifact(
      ReadOut(), sig, signing::testing::TrustOf({key}), flags_.out);
  ASSERT_TRUE(signer.ok()) << signer.status();
  EXPECT_EQ(*signer, key.key_id);

  // Exported again without a key: the stale signature goes, so the new
  // artifact never sits beside the old one's signature.
  auto unsigned_export =
      ExportPolicy((*t)->training, (*t)->network, (*t)->measures, flags_);
  ASSERT_TRUE(unsigned_export.ok());
  EXPECT_FALSE(fs::exists(signing::SignaturePathFor(flags_.out)));
}

}  // namespace
}  // namespace phaseloop::offline_rl
