// A speed policy's dataset with canary runs: the run's final reward joined by
// build_id to the decisions the candidate policy made in that build
// (offline_rl/learner/canary_values.h), beside the runtime search's staging
// rewards.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

const std::vector<std::string> kPipelines = {"default<O3>", "default<O2>",
                                             "default<O1>,default<O3>",
                                             "default<O3>,default<O3>"};

class CanaryDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = replay_buffer::OpenReplayStore(
        phaseloop::testing::MakeTempDir() + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_ = testing::Llvm16DatasetOptions();
    for (size_t c = 0; c < kPipelines.size(); ++c) {
      options_.candidates.push_back(
          {"p" + std::to_string(c), {}, kPipelines[c]});
    }
    // r0..r5 train, r6..r8 test.
    ASSERT_TRUE(
        testing::WriteRuntimeSearchBuffer(*store_, kPipelines, 6, 3, 5).ok());
    config_.objective = "runtime";
    config_.policy_objective = "runtime";
    config_.validation_split = "validation";
    config_.step_reward_weight = 0;
    config_.final_reward_weights = {{"staging", 1.0}, {"canary", 1.0}};
  }

  // A decision of build `build` on module `module` with `pipeline`, the
  // features of `like`'s runtime-search episode (or, for a module the buffer
  // does not know, those features shifted so the state is its own).
  v1::Decision Decision(const std::string& build, const std::string& module,
                        const std::string& pipeline, const std::string& like) {
    auto episodes = store_->ReadEpisodes({like + "-1"});
    EXPECT_TRUE(episodes.ok()) << episodes.status();
    const v1::Step& s = (*episodes)[0].steps(0);
    v1::Decision d;
    d.set_decision_id(build + "/" + module + "/" + pipeline);
    d.set_outcome(v1::OPTIMIZED);
    d.set_opt_level("O3");
    d.set_module_hash(module);
    d.set_pipeline(pipeline);
    d.set_build_id(build);
    *d.mutable_autophase() = s.autophase();
    *d.mutable_inst_count() = s.inst_count();
    if (module != like) d.set_inst_count(0, s.inst_count(0) + 1000);
    return d;
  }

  static v1::FinalReward RunReward(const std::string& run,
                                   const std::string& build, double value) {
    v1::FinalReward r;
    r.set_reward_id("canary-run/" + run);
    r.set_source("canary");
    r.set_build_id(build);
    r.set_deployment_id("canary-" + run);
    r.set_value(value);
    return r;
  }

  // Run 1 (build b1, rolled back, -0.12): r0 -> p2, r1 -> -O3, a module of
  // the service's own "svc" -> p3, test module r6 -> p1; decisions that are
  // no training data: r2's where the policy did not apply, r3's without
  // features, r4's at -Os. Run 2 (b2, promoted, +0.04): r0 -> p2 again.
  // And a reward engine window reward (no build_id) worth 5.
  void WriteCanaryRuns() {
    replay_buffer::WriteBatch batch;
    batch.decisions = {
        Decision("b1", "r0", kPipelines[2], "r0"),
        Decision("b1", "r1", kPipelines[0], "r1"),
        Decision("b1", "svc", kPipelines[3], "r5"),
        Decision("b1", "r6", kPipelines[1], "r6"),
        Decision("b1", "r2", kPipelines[1], "r2"),
        Decision("b1", "r3", kPipelines[1], "r3"),
        Decision("b1", "r4", kPipelines[1], "r4"),
        Decision("b2", "r0", kPipelines[2], "r0"),
    };
    batch.decisions[4].set_outcome(v1::POLICY_NOT_APPLIED);
    batch.decisions[5].clear_inst_count();
    batch.decisions[6].set_opt_level("Os");
    batch.rewards = {RunReward("1", "b1", -0.12), RunReward("2", "b2", 0.04)};
    v1::FinalReward window = RunReward("w", "", 5.0);
    window.set_reward_id("canary/svc/canary-1/60000/canary");
    window.set_window_start_ms(60000);
    batch.rewards.push_back(window);
    ASSERT_TRUE(store_->Write(batch).ok());
  }

  Dataset Build() {
    auto data = BuildDataset(*store_, config_, options_);
    EXPECT_TRUE(data.ok()) << data.status();
    return data.ok() ? *std::move(data) : Dataset();
  }

  // module_hash -> its row of candidate values.
  static std::map<std::string, std::vector<float>> Rows(
      const CandidateTable& t) {
    std::map<std::string, std::vector<float>> rows;
    const size_t k = kPipelines.size();
    for (size_t m = 0; m < t.module_hashes.size(); ++m) {
      rows[t.module_hashes[m]] = std::vector<float>(
          t.values.begin() + m * k, t.values.begin() + (m + 1) * k);
    }
    return rows;
  }

  std::unique_ptr<replay_buffer::ReplayStore> store_;
  DatasetOptions options_;
  LearnerConfig config_;
};

TEST_F(CanaryDatasetTest, RunRewardsBecomeValuesOfTheBuildsChoices) {
  const Dataset before = Build();
  const auto rs = Rows(before.train.table);
  WriteCanaryRuns();
  const Dataset data = Build();
  const auto rows = Rows(data.train.table);
  ASSERT_EQ(rows.size(), 7u);  // r0..r5 and the service's module
  EXPECT_EQ(data.train.canary_runs, 2);
  EXPECT_EQ(data.train.canary_decisions, 4);  // b1: r0 r1 svc, b2: r0
  // r2's (not the policy's choice) and r3's (no features); r4's at -Os is
  // not even read (a speed policy acts at -O2/-O3).
  EXPECT_EQ(data.train.skipped_decisions, 2);

  // r0/p2: the mean of the staging value and the mean of the two runs.
  const float canary = (-0.12f + 0.04f) / 2;
  EXPECT_NEAR(rows.at("r0")[2], (rs.at("r0")[2] + canary) / 2, 1e-6);
  for (int c : {0, 1, 3}) EXPECT_EQ(rows.at("r0")[c], rs.at("r0")[c]) << c;
  // The policy kept -O3 on r1: worth 0 whatever the reward; r2..r4's
  // decisions are no data.
  for (const char* m : {"r1", "r2", "r3", "r4", "r5"}) {
    EXPECT_EQ(rows.at(m), rs.at(m)) << m;
  }
  // A module only the canary judged: its own state, -O3 = 0, p3 = reward.
  const std::vector<float>& svc = rows.at("svc");
  EXPECT_EQ(svc[0], 0.0f);
  EXPECT_TRUE(std::isnan(svc[1]) && std::isnan(svc[2]));
  EXPECT_FLOAT_EQ(svc[3], -0.12f);
  const auto& t = data.train.table;
  const int dim = policy_runtime::StateDim(options_.pass_names.size());
  size_t at = 0;
  while (t.module_hashes[at] != "svc") ++at;
  std::vector<float> want(dim);
  const v1::Decision d = Decision("b1", "svc", kPipelines[3], "r5");
  policy_runtime::BuildState(
      std::vector<int64_t>(d.autophase().begin(), d.autophase().end()),
      std::vector<int64_t>(d.inst_count().begin(), d.inst_count().end()), {},
      options_.pass_names.size(), absl::MakeSpan(want));
  EXPECT_EQ(std::vector<float>(t.start_states.begin() + at * dim,
                               t.start_states.begin() + (at + 1) * dim),
            want);
  // Its transitions: (svc, p0, 0) and (svc, p3, -0.12).
  EXPECT_EQ(data.train.transitions.size(), before.train.transitions.size() + 2);

  // The held-out module's run value stays in its split.
  const auto test_rows = Rows(data.validation.table);
  const auto test_rs = Rows(before.validation.table);
  EXPECT_EQ(rows.count("r6"), 0u);
  EXPECT_NEAR(test_rows.at("r6")[1], (test_rs.at("r6")[1] - 0.12f) / 2, 1e-6);
  EXPECT_EQ(data.validation.canary_runs, 1);

  // The data snapshot names and hashes the canary rows.
  EXPECT_NE(data.snapshot, before.snapshot);
  EXPECT_NE(data.snapshot.find("canary: 3 run rewards over 5 decisions"),
            std::string::npos)
      << data.snapshot;
  EXPECT_EQ(Build().snapshot, data.snapshot);
}

TEST_F(CanaryDatasetTest, TheCanaryWeightScalesAndZeroLeavesThemOut) {
  WriteCanaryRuns();
  config_.final_reward_weights["canary"] = 2.0;
  EXPECT_FLOAT_EQ(Rows(Build().train.table).at("svc")[3], -0.24f);
  config_.final_reward_weights["canary"] = 0;
  const Dataset off = Build();
  EXPECT_EQ(off.train.canary_runs, 0);
  EXPECT_EQ(Rows(off.train.table).count("svc"), 0u);
  config_.final_reward_weights.erase("canary");
  EXPECT_EQ(Build().snapshot, off.snapshot);
}

TEST_F(CanaryDatasetTest, AgainstStableOnlyTheChoicesThatDifferAreJudged) {
  const auto before = Rows(Build().train.table);
  // Stable "pol-1" (its decisions from build s1): r0 -> p2, r1 -> p1,
  // svc -> p3, nothing on r5. Run 3 rolls out "pol-2" against it (+0.06):
  // r0 -> p2 (the same code), r1 -> p0 (back to -O3: p1 judged, -0.06),
  // svc -> p1 and r5 -> p3 (off -O3 on both sides, or stable's unknown).
  // Run 4 against plain clang (+0.02): r2 -> p2.
  auto with_version = [](v1::Decision d, const std::string& version) {
    d.set_policy_version(version);
    return d;
  };
  replay_buffer::WriteBatch batch;
  batch.decisions = {
      with_version(Decision("s1", "r0", kPipelines[2], "r0"), "pol-1"),
      with_version(Decision("s1", "r1", kPipelines[1], "r1"), "pol-1"),
      with_version(Decision("s1", "svc", kPipelines[3], "r5"), "pol-1"),
      with_version(Decision("b3", "r0", kPipelines[2], "r0"), "pol-2"),
      with_version(Decision("b3", "r1", kPipelines[0], "r1"), "pol-2"),
      with_version(Decision("b3", "svc", kPipelines[1], "r5"), "pol-2"),
      with_version(Decision("b3", "r5", kPipelines[3], "r5"), "pol-2"),
      // Back to -O3 where stable's choice is unknown: no cell either.
      with_version(Decision("b3", "r4", kPipelines[0], "r4"), "pol-2"),
      with_version(Decision("b4", "r2", kPipelines[2], "r2"), "pol-3"),
  };
  v1::FinalReward run3 = RunReward("3", "b3", 0.06);
  run3.set_baseline_policy_version("pol-1");
  v1::FinalReward run4 = RunReward("4", "b4", 0.02);
  run4.set_baseline_policy_version("");
  batch.rewards = {run3, run4};
  ASSERT_TRUE(store_->Write(batch).ok());

  const Dataset data = Build();
  const auto rows = Rows(data.train.table);
  EXPECT_EQ(data.train.canary_runs, 2);
  EXPECT_EQ(data.train.canary_decisions, 2);   // b3: r1, b4: r2
  EXPECT_EQ(data.train.canary_unchanged, 1);   // r0
  EXPECT_EQ(data.train.canary_unanchored, 3);  // svc, r5, r4
  EXPECT_EQ(rows.at("r0"), before.at("r0"));
  EXPECT_NEAR(rows.at("r1")[1], (before.at("r1")[1] - 0.06f) / 2, 1e-6);
  EXPECT_EQ(rows.at("r1")[0], 0.0f);
  EXPECT_NEAR(rows.at("r2")[2], (before.at("r2")[2] + 0.02f) / 2, 1e-6);
  EXPECT_EQ(rows.at("r5"), before.at("r5"));
  EXPECT_EQ(rows.at("r4"), before.at("r4"));
  EXPECT_EQ(rows.count("svc"), 0u);
  EXPECT_NE(data.snapshot.find("canary decisions without a value: 1 the "
                               "same as stable's, 3 against a stable choice "
                               "unknown or never valued"),
            std::string::npos)
      << data.snapshot;

  // The modules canaries judged, and what a given stable policy runs there.
  EXPECT_EQ(data.train.canary_judged.size(), 2u);  // r1 (p1), r2 (p2)
  EXPECT_FALSE(data.train.stable_choice_read);
  options_.stable_version = "pol-1";
  Dataset with_stable = Build();
  EXPECT_TRUE(with_stable.train.stable_choice_read);
  EXPECT_EQ(with_stable.train.stable_choice,
            (std::map<std::string, int>{{"r1", 1}, {"r2", -1}}));
  options_.stable_version = "";  // plain clang: -O3 everywhere
  with_stable = Build();
  EXPECT_EQ(with_stable.train.stable_choice,
            (std::map<std::string, int>{{"r1", 0}, {"r2", 0}}));
  options_.stable_version.reset();

  // An A/A run (the candidate decides like stable everywhere) adds nothing.
  replay_buffer::WriteBatch aa;
  aa.decisions = {
      with_version(Decision("b5", "r0", kPipelines[2], "r0"), "pol-4")};
  v1::FinalReward run5 = RunReward("5", "b5", 0.03);
  run5.set_baseline_policy_version("pol-1");
  aa.rewards = {run5};
  ASSERT_TRUE(store_->Write(aa).ok());
  const Dataset after = Build();
  EXPECT_EQ(Rows(after.train.table), rows);
  EXPECT_EQ(after.train.canary_runs, 2);
  EXPECT_EQ(after.train.canary_unchanged, 2);
}

TEST_F(CanaryDatasetTest, AStableChoiceAnEarlierRunValuedAnchorsTheNextRun) {
  WriteCanaryRuns();  // run 1 values svc/p3 at -0.12 (against -O3)
  const auto before = Rows(Build().train.table);
  // Later, stable "pol-1" runs svc on p3 and run 3 tries p1 there (+0.05):
  // p1 is worth 0.05 more than p3 is.
  replay_buffer::WriteBatch batch;
  v1::Decision stable = Decision("s1", "svc", kPipelines[3], "r5");
  stable.set_policy_version("pol-1");
  v1::Decision tried = Decision("b3", "svc", kPipelines[1], "r5");
  tried.set_policy_version("pol-2");
  batch.decisions = {stable, tried};
  v1::FinalReward run3 = RunReward("3", "b3", 0.05);
  run3.set_baseline_policy_version("pol-1");
  run3.set_unix_time_ms(10);
  batch.rewards = {run3};
  ASSERT_TRUE(store_->Write(batch).ok());
  const Dataset data = Build();
  const auto rows = Rows(data.train.table);
  EXPECT_FLOAT_EQ(rows.at("svc")[1], 0.05f - 0.12f);
  EXPECT_FLOAT_EQ(rows.at("svc")[3], before.at("svc")[3]);
  EXPECT_EQ(data.train.canary_unanchored, 0);

  // Run 3 earlier than run 1: nothing valued p3 yet, so no anchor.
  run3.set_unix_time_ms(-10);
  batch.decisions.clear();
  batch.rewards = {run3};
  ASSERT_TRUE(store_->Write(batch).ok());
  const Dataset unanchored = Build();
  EXPECT_TRUE(std::isnan(Rows(unanchored.train.table).at("svc")[1]));
  EXPECT_EQ(unanchored.train.canary_unanchored, 1);
}

TEST_F(CanaryDatasetTest, APromotedRunCountsItsSpeedARolledBackOneItsPenalty) {
  const auto before = Rows(Build().train.table);
  replay_buffer::WriteBatch batch;
  batch.decisions = {Decision("b6", "r2", kPipelines[2], "r2"),
                     Decision("b7", "r3", kPipelines[3], "r3")};
  // Promoted: +0.01 of pass bonus over a measured -0.004.
  v1::FinalReward promoted = RunReward("6", "b6", 0.01);
  promoted.set_relative_value(-0.004);
  promoted.set_baseline_policy_version("");
  // Rolled back: min(0.02, 0) - 0.1.
  v1::FinalReward rolled_back = RunReward("7", "b7", -0.1);
  rolled_back.set_relative_value(0.02);
  rolled_back.set_baseline_policy_version("");
  batch.rewards = {promoted, rolled_back};
  ASSERT_TRUE(store_->Write(batch).ok());
  const auto rows = Rows(Build().train.table);
  EXPECT_NEAR(rows.at("r2")[2], (before.at("r2")[2] - 0.004f) / 2, 1e-6);
  EXPECT_NEAR(rows.at("r3")[3], (before.at("r3")[3] - 0.1f) / 2, 1e-6);
}

TEST_F(CanaryDatasetTest, ABlockedChoiceIsNoValueAndAnotherRewardNewData) {
  WriteCanaryRuns();
  const Dataset data = Build();
  // A changed reward changes the data snapshot.
  replay_buffer::WriteBatch batch;
  batch.rewards = {RunReward("2", "b2", 0.05)};
  ASSERT_TRUE(store_->Write(batch).ok());
  const Dataset changed = Build();
  EXPECT_NE(changed.snapshot, data.snapshot);

  v1::Miscompile m;
  m.set_workload("w");
  m.set_run("run");
  m.set_verdict(replay_buffer::kVerdictMiscompile);
  v1::BlamedPipeline* b = m.add_blamed();
  b->set_module_hash("svc");
  b->set_pipeline(kPipelines[3]);
  ASSERT_TRUE(store_->AddMiscompile(m).ok());
  const Dataset blocked = Build();
  EXPECT_EQ(Rows(blocked.train.table).count("svc"), 0u);
  EXPECT_EQ(blocked.train.blocked, 1);
}

}  // namespace
}  // namespace phaseloop::offline_rl
