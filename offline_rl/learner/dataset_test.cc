#include "offline_rl/learner/dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include "common/testing/test_util.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_ = testing::Llvm16DatasetOptions();
  }
  // Blocks `pipeline` for `module_hash` as staging does on a miscompile.
  void Block(const std::string& module_hash, const std::string& pipeline) {
    v1::Miscompile m;
    m.set_workload("w");
    m.set_run("run[" + std::to_string(blocks_++) + "]");
    m.set_verdict(replay_buffer::kVerdictMiscompile);
    v1::BlamedPipeline* b = m.add_blamed();
    b->set_module_hash(module_hash);
    b->set_pipeline(pipeline);
    ASSERT_TRUE(store_->AddMiscompile(m).ok());
  }
  // The pipeline text of the first `count` actions of `actions`.
  std::string Pipeline(const std::vector<int32_t>& actions, size_t count) {
    std::string text;
    for (size_t i = 0; i < count && i < actions.size(); ++i) {
      if (!text.empty()) text += ",";
      text += options_.pass_pipelines[actions[i]];
    }
    return text;
  }
  // Every episode in the buffer.
  std::vector<v1::Episode> AllEpisodes() {
    auto keys = store_->ListEpisodes({});
    EXPECT_TRUE(keys.ok()) << keys.status();
    if (!keys.ok()) return {};
    std::vector<std::string> ids;
    for (const auto& k : *keys) ids.push_back(k.episode_id);
    auto episodes = store_->ReadEpisodes(ids);
    EXPECT_TRUE(episodes.ok()) << episodes.status();
    return episodes.ok() ? *std::move(episodes) : std::vector<v1::Episode>{};
  }
  // A copy of episode `of` as episode `id`, changed by `change`, with a
  // staging reward `value`, added to `batch`.
  void AddRewardedCopy(const std::string& of, const std::string& id,
                       double value,
                       const std::function<void(v1::Episode*)>& change,
                       replay_buffer::WriteBatch* batch) {
    const std::vector<v1::Episode> all = AllEpisodes();
    const auto found = std::find_if(
        all.begin(), all.end(),
        [&](const v1::Episode& e) { return e.episode_id() == of; });
    ASSERT_NE(found, all.end()) << of;
    v1::Episode copy = *found;
    copy.set_episode_id(id);
    change(&copy);
    batch->episodes.push_back(copy);
    v1::FinalReward r;
    r.set_reward_id("staging/" + id);
    r.set_source("staging");
    r.set_module_hash(copy.module_hash());
    r.set_episode_id(id);
    r.set_value(value);
    batch->rewards.push_back(r);
  }
  // One candidate per runtime pipeline, named p0, p1, ...
  void AddRuntimeCandidates(const std::vector<std::string>& pipelines) {
    for (size_t c = 0; c < pipelines.size(); ++c) {
      options_.candidates.push_back(
          {"p" + std::to_string(c), {}, pipelines[c]});
    }
  }
  // A speed policy's config valued by staging rewards alone, validated on
  // the validation split.
  static LearnerConfig RuntimeConfig() {
    LearnerConfig config;
    config.objective = "runtime";
    config.policy_objective = "runtime";
    config.validation_split = "validation";
    config.step_reward_weight = 0;
    config.final_reward_weights = {{"staging", 1.0}};
    return config;
  }
  int blocks_ = 0;
  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  DatasetOptions options_;
};

// The review: a second `candidates mine` named other pipelines c000/c001,
// and the first mining's episodes were read as the new candidates' (30
// episodes where 18 were this set's, two conflicting values per cell).
TEST_F(DatasetTest, EpisodesMinedForAnotherCandidateSetAreNotRead) {
  ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 10, 4, 7).ok());
  ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
  auto candidates = ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  options_.candidates = *candidates;
  LearnerConfig config;
  auto before = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(before.ok()) << before.status();
  // An older mining's episode of "c1" on a training module, and one of
  // this set (as `candidates mine` versions them): only the latter counts.
  replay_buffer::WriteBatch batch;
  for (const std::string& version :
       {std::string("candidates/0123456789abcdef"),
        CandidateSetVersion(options_.candidates)}) {
    v1::Episode e;
    e.set_episode_id("mined-" + version);
    e.set_module_hash(before->train.table.module_hashes[0]);
    e.set_action_space_version(version);
    e.set_objective("alloc_size");
    e.set_behaviour_policy("candidate:c1");
    v1::Step* step = e.add_steps();
    for (int i = 0; i < 56; ++i) step->add_autophase(1);
    for (int i = 0; i < 70; ++i) step->add_inst_count(1);
    step->set_reward(0.5);
    batch.episodes.push_back(e);
  }
  ASSERT_TRUE(store_->Write(batch).ok());
  auto after = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->train.episodes, before->train.episodes + 1);
  EXPECT_EQ(after->train.skipped_episodes, before->train.skipped_episodes + 1);
}

TEST_F(DatasetTest, CandidateTransitionsTableAndDemonstrations) {
  ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 10, 4, 7).ok());
  ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
  auto candidates = ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 4u);
  EXPECT_EQ((*candidates)[1].actions.size(), 2u);  // names resolved
  EXPECT_EQ((*candidates)[2].actions, std::vector<int32_t>{3});
  options_.candidates = *candidates;
  LearnerConfig config;
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const int dim = policy_runtime::StateDim(options_.pass_names.size());
  EXPECT_EQ(data->action_names,
            (std::vector<std::string>{"oz", "c1", "c2", "c3"}));
  EXPECT_EQ(data->train.episodes, 40);
  EXPECT_EQ(data->train.transitions.size(), 40);
  EXPECT_EQ(data->train.transitions.state_dim, dim);
  EXPECT_EQ(data->train.transitions.num_actions, 4);
  EXPECT_EQ(data->train.transitions.initial_count(), 10);
  EXPECT_EQ(data->train.demonstrations.size(), 10);
  EXPECT_EQ(data->validation.table.module_hashes.size(), 4u);
  for (int64_t i = 0; i < data->train.transitions.size(); ++i) {
    EXPECT_EQ(data->train.transitions.done[i], 1);
  }
  // The demonstration of each module is its best measured candidate.
  const CandidateTable& table = data->train.table;
  for (size_t m = 0; m < table.module_hashes.size(); ++m) {
    int best = 0;
    for (int c = 1; c < 4; ++c) {
      if (table.values[m * 4 + c] > table.values[m * 4 + best]) best = c;
    }
    EXPECT_EQ(data->train.demonstrations.actions[m], best);
    EXPECT_NE(best, 0);
    EXPECT_FLOAT_EQ(table.values[m * 4], 0.0f);  // oz
  }
  EXPECT_NE(data->snapshot.find("train: 40 episodes"), std::string::npos)
      << data->snapshot;
  EXPECT_NE(data->snapshot.find("validation: 16 episodes"), std::string::npos);

  // Same contents, same digest; more data, another digest.
  auto again = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->snapshot, data->snapshot);

  // The same measurements taken again, at another time on another host:
  // the data snapshot (and so a retrained artifact) does not change.
  const std::vector<v1::Episode> episodes = AllEpisodes();
  ASSERT_FALSE(episodes.empty());
  replay_buffer::WriteBatch remeasured;
  for (v1::Episode e : episodes) {
    e.set_unix_time_ms(e.unix_time_ms() + 86400000);
    e.set_seconds(e.seconds() + 1.5);
    e.set_host("another-host");
    remeasured.episodes.push_back(std::move(e));
  }
  ASSERT_TRUE(store_->Write(remeasured).ok());
  auto remeasured_data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(remeasured_data.ok());
  EXPECT_EQ(remeasured_data->snapshot, data->snapshot);
}

// A text_size dataset does not read allocated sizes: episodes that record
// them beside .text (as mining and search now do) give the snapshot they
// gave before, so a first-generation policy retrains byte for byte. An
// alloc_size dataset reads them: its snapshot follows them.
TEST_F(DatasetTest, AllocatedSizesCountInTheSnapshotOnlyForAllocSize) {
  ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 10, 4, 7).ok());
  ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
  options_.candidates =
      *ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
  const std::vector<v1::Episode> episodes = AllEpisodes();
  ASSERT_FALSE(episodes.empty());
  // Returns the snapshot of `objective` episodes, with or without their
  // allocated sizes (each write replaces the episodes by id).
  auto snapshot = [&](const std::string& objective, bool with_alloc) {
    replay_buffer::WriteBatch batch;
    for (v1::Episode e : episodes) {
      e.set_objective(objective);
      if (!with_alloc) {
        e.clear_final_alloc_size();
        for (v1::Step& s : *e.mutable_steps()) s.clear_alloc_size_after();
      }
      batch.episodes.push_back(std::move(e));
    }
    EXPECT_TRUE(store_->Write(batch).ok());
    LearnerConfig config;
    config.objective = objective;
    auto data = BuildDataset(*store_, config, options_);
    EXPECT_TRUE(data.ok()) << data.status();
    if (!data.ok()) return std::string();
    // The abstain margin's sizes are the objective's: the whole object for
    // alloc_size, .text otherwise; each cell is its episode's figure.
    const CandidateTable& table = data->train.table;
    const std::vector<std::string> names = testing::CandidateNames();
    const size_t k = names.size();
    EXPECT_EQ(table.object_sizes.size(), table.module_hashes.size() * k);
    for (size_t m = 0; m < table.module_hashes.size(); ++m) {
      for (size_t c = 0; c < k; ++c) {
        for (const v1::Episode& e : episodes) {
          if (e.module_hash() != table.module_hashes[m] ||
              e.behaviour_policy() != "candidate:" + names[c]) {
            continue;
          }
          const int64_t expected = objective == "alloc_size"
                                       ? e.final_alloc_size()
                                       : e.final_text_size();
          if (objective == "alloc_size" && !with_alloc) {
            EXPECT_TRUE(std::isnan(table.object_sizes[m * k + c]));
          } else {
            EXPECT_EQ(table.object_sizes[m * k + c],
                      static_cast<double>(expected));
          }
        }
      }
    }
    return data->snapshot;
  };
  ASSERT_NE(episodes[0].final_alloc_size(), episodes[0].final_text_size());
  const std::string text_without = snapshot("text_size", false);
  EXPECT_EQ(snapshot("text_size", true), text_without);
  const std::string alloc_with = snapshot("alloc_size", true);
  EXPECT_NE(snapshot("alloc_size", false), alloc_with);
}

TEST_F(DatasetTest, StepwiseHistoryRewardsAndCut) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 3, 2, 2, 6, 5).ok());
  LearnerConfig config;
  config.formulation = "stepwise";
  config.max_steps = 4;
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const TransitionSet& t = data->train.transitions;
  const int n = static_cast<int>(options_.pass_names.size());
  ASSERT_EQ(t.size(), 3 * 2 * 4);  // cut at max_steps
  EXPECT_EQ(t.initial_count(), 6);
  auto episodes = store_->ReadEpisodes({"m0-e0"});
  ASSERT_TRUE(episodes.ok());
  const v1::Episode& e = (*episodes)[0];
  // Transitions are in episode-id order: m0-e0 comes first.
  for (int i = 0; i < 4; ++i) {
    const float* s = t.states.data() + i * t.state_dim;
    EXPECT_EQ(t.actions[i], e.steps(i).action());
    EXPECT_FLOAT_EQ(t.rewards[i], static_cast<float>(e.steps(i).reward()));
    EXPECT_EQ(t.done[i], i == 3 ? 1 : 0);
    // The history part counts the actions taken before step i.
    float taken = 0;
    for (int a = 0; a < n; ++a) taken += s[127 + a];
    EXPECT_FLOAT_EQ(taken, static_cast<float>(i));
    EXPECT_FLOAT_EQ(s[126],
                    std::log1p(static_cast<float>(e.steps(i).inst_count(0))));
    if (i < 3) {  // s' is the next transition's s
      for (int f = 0; f < t.state_dim; ++f) {
        ASSERT_FLOAT_EQ(t.next_states[i * t.state_dim + f],
                        t.states[(i + 1) * t.state_dim + f]);
      }
    }
  }
  // Demonstrations: the best sequence of each module, up to max_steps.
  EXPECT_EQ(data->train.demonstrations.size(), 3 * 4);
  EXPECT_EQ(data->validation.transitions.size(), 2 * 2 * 4);
}

TEST_F(DatasetTest, StepwiseBlockedPairsAreCutAndNeverDemonstrated) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 3, 0, 2, 6, 5).ok());
  LearnerConfig config;
  config.formulation = "stepwise";
  config.max_steps = 4;
  auto before = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->train.transitions.size(), 3 * 2 * 4);
  ASSERT_EQ(before->train.demonstrations.size(), 3 * 4);

  // m0-e0's first two actions, and m1's best sequence, miscompiled.
  auto episodes = store_->ReadEpisodes({"m0-e0"});
  ASSERT_TRUE(episodes.ok());
  std::vector<int32_t> e0;
  for (const v1::Step& step : (*episodes)[0].steps()) {
    e0.push_back(step.action());
  }
  Block("m0", Pipeline(e0, 2));
  auto best = store_->ReadBestSequences("m1");
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  const std::vector<int32_t> m1_best((*best)[0].actions().begin(),
                                     (*best)[0].actions().end());
  Block("m1", Pipeline(m1_best, m1_best.size()));
  // A pipeline blocked for another module blocks nothing here.
  Block("elsewhere", Pipeline(e0, 3));

  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const TransitionSet& t = data->train.transitions;
  // m0-e0 (first in id order) keeps its first step, now its last.
  EXPECT_EQ(t.actions[0], e0[0]);
  EXPECT_EQ(t.done[0], 1);
  // Any episode that reached a blocked pipeline within max_steps is cut.
  const std::map<std::string, std::string> blocked = {
      {"m0", Pipeline(e0, 2)}, {"m1", Pipeline(m1_best, m1_best.size())}};
  int64_t cut = 0;
  for (const char* id : {"m0-e0", "m0-e1", "m1-e0", "m1-e1"}) {
    auto e = store_->ReadEpisodes({id});
    ASSERT_TRUE(e.ok());
    std::vector<int32_t> actions;
    for (const v1::Step& step : (*e)[0].steps()) {
      actions.push_back(step.action());
    }
    for (size_t k = 1; k <= 4; ++k) {
      if (Pipeline(actions, k) == blocked.at((*e)[0].module_hash())) {
        ++cut;
        break;
      }
    }
  }
  EXPECT_GE(cut, 1);
  EXPECT_EQ(data->train.blocked, cut + 1);  // + m1's demonstration
  EXPECT_LT(t.size(), 3 * 2 * 4 - 2);
  // m1 has no demonstration any more; m0's best is not blocked.
  EXPECT_EQ(data->train.demonstrations.size(),
            3 * 4 - std::min<int64_t>(4, m1_best.size()));
  EXPECT_NE(data->snapshot, before->snapshot);
  EXPECT_NE(data->snapshot.find("blocked (module, pipeline) targets left out"),
            std::string::npos)
      << data->snapshot;

  // Without the actions' pipelines the block list cannot be matched.
  DatasetOptions no_pipelines = options_;
  no_pipelines.pass_pipelines.clear();
  EXPECT_EQ(BuildDataset(*store_, config, no_pipelines).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(DatasetTest, CandidatesBlockedForAModuleAreNotMeasuredThere) {
  ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 10, 0, 7).ok());
  ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
  auto candidates = ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  options_.candidates = *candidates;
  LearnerConfig config;
  auto before = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(before.ok()) << before.status();
  const CandidateTable& table = before->train.table;
  // Block, on the first module, the candidate that is best there.
  int best = 0;
  for (int c = 1; c < 4; ++c) {
    if (table.values[c] > table.values[best]) best = c;
  }
  ASSERT_NE(best, 0);
  Block(table.module_hashes[0], (*candidates)[best].pipeline);
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train.blocked, 1);
  EXPECT_EQ(data->train.transitions.size(), 40 - 1);
  EXPECT_TRUE(std::isnan(data->train.table.values[best]));
  // Its demonstration is the best candidate that is not blocked.
  EXPECT_NE(data->train.demonstrations.actions[0], best);
  EXPECT_EQ(data->train.demonstrations.size(), 10);
}

TEST_F(DatasetTest, FinalRewardsAddedAtTheLastStepWithTheirWeight) {
  ASSERT_TRUE(testing::WriteStepwiseBuffer(*store_, 2, 0, 1, 3, 9).ok());
  replay_buffer::WriteBatch batch;
  v1::FinalReward r;
  r.set_reward_id("r1");
  r.set_source("staging");
  r.set_episode_id("m0-e0");
  r.set_value(0.5);
  batch.rewards.push_back(r);
  ASSERT_TRUE(store_->Write(batch).ok());
  LearnerConfig config;
  config.formulation = "stepwise";
  config.step_reward_weight = 0;
  config.final_reward_weights = {{"staging", 2.0}, {"canary", 1.0}};
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const TransitionSet& t = data->train.transitions;
  ASSERT_EQ(t.size(), 6);
  EXPECT_FLOAT_EQ(t.rewards[0], 0);
  EXPECT_FLOAT_EQ(t.rewards[1], 0);
  EXPECT_FLOAT_EQ(t.rewards[2], 1.0);  // 2 * 0.5 at m0-e0's last step
  EXPECT_FLOAT_EQ(t.rewards[5], 0);    // m1-e0 is not judged
}

// A speed policy's data: runtime-search evaluations matched to candidates
// by pipeline, valued by their staging reward; -O3 worth 0 everywhere; an
// evaluation without a reward is no value; the held-out split stays out.
TEST_F(DatasetTest, RuntimeCandidatesFromRuntimeSearchEpisodes) {
  const std::vector<std::string> pipelines = {"default<O3>", "default<O2>",
                                              "default<O1>,default<O3>",
                                              "default<O3>,default<O3>"};
  ASSERT_TRUE(
      testing::WriteRuntimeSearchBuffer(*store_, pipelines, 6, 3, 5).ok());
  AddRuntimeCandidates(pipelines);
  const LearnerConfig config = RuntimeConfig();
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const CandidateTable& t = data->train.table;
  ASSERT_EQ(t.module_hashes.size(), 6u);
  EXPECT_EQ(data->train.episodes, 6 * 3);
  EXPECT_EQ(data->train.skipped_episodes, 6);  // the unrewarded ones
  EXPECT_EQ(data->train.transitions.size(), 6 * 4);
  EXPECT_EQ(data->validation.table.module_hashes.size(), 3u);
  for (size_t m = 0; m < t.module_hashes.size(); ++m) {
    EXPECT_EQ(t.module_hashes[m].substr(0, 1), "r");
    EXPECT_FLOAT_EQ(t.values[m * 4 + 0], 0.0f);  // -O3 by definition
    int best = 0;
    for (int c = 1; c < 4; ++c) {
      const float v = t.values[m * 4 + c];
      ASSERT_FALSE(std::isnan(v)) << m << " " << c;
      EXPECT_TRUE(std::abs(v - 0.04f) < 0.006f || std::abs(v + 0.02f) < 0.006f)
          << v;
      if (v > t.values[m * 4 + best]) best = c;
    }
    EXPECT_NE(best, 0);  // one pipeline beats -O3 on every module
  }
  // Without -O3 among the candidates nothing is assumed for it.
  options_.candidates.erase(options_.candidates.begin());
  auto without = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->train.transitions.size(), 6 * 3);
}

// A pair the runtime search's runoff timed again takes the runoff's value,
// whether its episode's id sorts before or after the screen's.
TEST_F(DatasetTest, RuntimeRunoffValuesOverrideTheScreens) {
  const std::vector<std::string> pipelines = {"default<O3>", "default<O2>",
                                              "default<O1>,default<O3>"};
  ASSERT_TRUE(
      testing::WriteRuntimeSearchBuffer(*store_, pipelines, 4, 1, 5).ok());
  AddRuntimeCandidates(pipelines);
  // Runoff episodes for r0 and r1's default<O2> (screened as r0-1, r1-1),
  // one id sorting before the screen's and one after.
  replay_buffer::WriteBatch batch;
  for (const auto& [module, id, value] :
       std::vector<std::tuple<std::string, std::string, double>>{
           {"r0", "a-runoff", -0.03}, {"r1", "z-runoff", 0.07}}) {
    AddRewardedCopy(
        module + "-1", id, value,
        [](v1::Episode* e) {
          e->set_behaviour_policy(replay_buffer::kBehaviourRuntimeRunoff);
        },
        &batch);
  }
  ASSERT_TRUE(store_->Write(batch).ok());
  const LearnerConfig config = RuntimeConfig();
  auto data = BuildDataset(*store_, config, options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const CandidateTable& t = data->train.table;
  ASSERT_EQ(t.module_hashes.size(), 4u);
  EXPECT_EQ(data->train.episodes, 4 * 2 + 2);
  for (size_t m = 0; m < t.module_hashes.size(); ++m) {
    const float o2 = t.values[m * 3 + 1];
    if (t.module_hashes[m] == "r0") {
      EXPECT_FLOAT_EQ(o2, -0.03f);
    } else if (t.module_hashes[m] == "r1") {
      EXPECT_FLOAT_EQ(o2, 0.07f);
    } else {  // the screen's value: 0.04 or -0.02, give or take the noise
      EXPECT_TRUE(std::abs(o2 - 0.04f) < 0.006f ||
                  std::abs(o2 + 0.02f) < 0.006f)
          << o2;
    }
  }
}

// A profile-guided runtime search records the profile alone as the -O3
// cell of each hot (profiled) module: every other evaluation's reward there
// includes the profile's gain, so -O3 takes that value instead of 0,
// whether its episode's id sorts before or after the others.
TEST_F(DatasetTest, RuntimeBaselineCellTakesAMeasuredValue) {
  const std::vector<std::string> pipelines = {"default<O3>", "default<O2>"};
  ASSERT_TRUE(
      testing::WriteRuntimeSearchBuffer(*store_, pipelines, 4, 1, 5).ok());
  AddRuntimeCandidates(pipelines);
  replay_buffer::WriteBatch batch;
  for (const auto& [module, id, value] :
       std::vector<std::tuple<std::string, std::string, double>>{
           {"r0", "a-profiled", 0.05}, {"r1", "z-profiled", 0.06}}) {
    AddRewardedCopy(
        module + "-1", id, value,
        [](v1::Episode* e) { e->set_pipeline("default<O3>"); }, &batch);
  }
  ASSERT_TRUE(store_->Write(batch).ok());
  auto data = BuildDataset(*store_, RuntimeConfig(), options_);
  ASSERT_TRUE(data.ok()) << data.status();
  const CandidateTable& t = data->train.table;
  ASSERT_EQ(t.module_hashes.size(), 4u);
  for (size_t m = 0; m < t.module_hashes.size(); ++m) {
    const float o3 = t.values[m * 2 + 0];
    if (t.module_hashes[m] == "r0") {
      EXPECT_FLOAT_EQ(o3, 0.05f);
    } else if (t.module_hashes[m] == "r1") {
      EXPECT_FLOAT_EQ(o3, 0.06f);
    } else {
      EXPECT_FLOAT_EQ(o3, 0.0f);  // unmeasured: 0 by definition
    }
  }
}

TEST_F(DatasetTest, ClearErrors) {
  LearnerConfig config;
  config.formulation = "stepwise";
  auto empty = BuildDataset(*store_, config, options_);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(empty.status().message().find("phaseloop search"),
            std::string::npos);
  config.formulation = "candidate";
  EXPECT_EQ(BuildDataset(*store_, config, options_).status().code(),
            absl::StatusCode::kInvalidArgument);

  const std::string path = dir_ + "/bad.json";
  auto write = [&](const std::string& text) {
    std::ofstream(path) << text;
    return ReadCandidatesFile(path, options_.pass_names).status();
  };
  EXPECT_EQ(write("{").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(write("[]").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(write(R"([{"name": "a", "pipeline": "p", "actions": ["nope"]}])")
                .message()
                .find("unknown pass nope"),
            std::string::npos);
  EXPECT_NE(write(R"([{"name": "a", "pipeline": "p"},
                      {"name": "a", "pipeline": "q"}])")
                .message()
                .find("duplicate"),
            std::string::npos);
  EXPECT_EQ(ReadCandidatesFile(dir_ + "/none.json", options_.pass_names)
                .status()
                .code(),
            absl::StatusCode::kNotFound);
  // A file mined for another objective than the config reads is refused
  // with the fix; without a stated objective either way it is read.
  std::ofstream(path) << R"({"objective": "text_size", "candidates": [
                              {"name": "oz", "pipeline": "default<Oz>"}]})";
  const absl::Status mismatch =
      ReadCandidatesFile(path, options_.pass_names, "alloc_size").status();
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.message().find("--objective alloc_size"),
            std::string::npos)
      << mismatch;
  EXPECT_TRUE(ReadCandidatesFile(path, options_.pass_names, "text_size").ok());
  EXPECT_TRUE(ReadCandidatesFile(path, options_.pass_names).ok());
}

TEST(NormalizationTest, MeanAndInverseStddevConstantFeaturesUnscaled) {
  TransitionSet set;
  set.state_dim = 2;
  set.states = {1, 5, 3, 5, 5, 5};
  const Normalization n = ComputeNormalization(set);
  EXPECT_FLOAT_EQ(n.mean[0], 3);
  EXPECT_FLOAT_EQ(n.scale[0], 1 / std::sqrt(8.0f / 3));
  EXPECT_FLOAT_EQ(n.mean[1], 5);
  EXPECT_FLOAT_EQ(n.scale[1], 1);
}

}  // namespace
}  // namespace phaseloop::offline_rl
