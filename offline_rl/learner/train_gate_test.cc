// The publish gate end to end: a policy trained by RunTrain is evaluated
// against the current policy on a real corpus (fixture programs built by
// the `phaseloop corpus build` code path) and written only when it wins.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/test_buffers.h"
#include "offline_rl/learner/train_command.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/corpus/fixture_corpus.h"

namespace phaseloop::offline_rl {
namespace {

namespace fs = std::filesystem;

class TrainGateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    const fs::path base = fs::path(tmp != nullptr ? tmp : "/tmp") / "gate";
    auto built = corpus::BuildFixtureCorpus(base.string(),
                                            {"sorting", "bits", "strings"});
    ASSERT_TRUE(built.ok()) << built.status();
    corpus_ = new std::string((base / "corpus").string());
  }
  static std::string* corpus_;

  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(testing::WriteCandidateBuffer(**store, 40, 10, 1).ok());
    // Every candidate is -Oz, so the trained policy compiles exactly like
    // -Oz whatever it picks: text_oz_ratio 1.
    std::ofstream(dir_ + "/candidates.json") << R"json([
      {"name": "oz", "pipeline": "default<Oz>"},
      {"name": "c1", "pipeline": "default<Oz>"},
      {"name": "c2", "pipeline": "default<Oz>"},
      {"name": "c3", "pipeline": "default<Oz>"}])json";
    std::ofstream(dir_ + "/config.yaml")
        << "formulation: candidate\nalgorithm: bc\nnetwork: {hidden: [8]}\n"
        << "optimizer: {steps: 20, batch_size: 16}\ncheckpoint_every: 0\n";
  }

  int Train(const std::string& against, std::string* out, std::string* err) {
    CLI::App app;
    TrainFlags flags;
    AddTrainFlags(app, flags);
    std::vector<std::string> args = {
        "--buffer",       dir_ + "/buffer.db",
        "--config",       dir_ + "/config.yaml",
        "--candidates",   dir_ + "/candidates.json",
        "--out",          out_path(),
        "--gate-corpus",  *corpus_,
        "--gate-against", against,
        "--gate-split",   "",
        "--threads",      "2",
        "--json"};
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
    std::ostringstream o, e;
    const int code = RunTrain(flags, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }

  std::string out_path() const { return dir_ + "/policy.plpolicy"; }
  std::string dir_;
};
std::string* TrainGateTest::corpus_ = nullptr;

TEST_F(TrainGateTest, RefusedWhenNotBetterThanTheCurrentPolicy) {
  std::string out, err;
  // -Oz itself: the new policy ties (1.0 vs 1.0), which is not better.
  EXPECT_EQ(Train("baseline", &out, &err), 3) << err;
  EXPECT_NE(err.find("not published"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out_path()));
  EXPECT_FALSE(fs::exists(out_path() + ".gate.tmp"));
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["gate"]["passed"], false);
  EXPECT_DOUBLE_EQ(j["gate"]["new"].get<double>(), 1.0);
  EXPECT_EQ(j["gate"]["modules"], 3);
}

TEST_F(TrainGateTest, PublishedWhenBetter) {
  std::string out, err;
  // A weak current policy: SROA alone leaves far more code than -Oz.
  ASSERT_EQ(Train("fixed:function(sroa<modify-cfg>)", &out, &err), 0) << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["gate"]["passed"], true);
  EXPECT_GT(j["gate"]["new"].get<double>(), j["gate"]["current"].get<double>());
  EXPECT_TRUE(policy_runtime::ReadPolicyArtifactFile(out_path()).ok());
  EXPECT_FALSE(fs::exists(out_path() + ".gate.tmp"));
}

}  // namespace
}  // namespace phaseloop::offline_rl
