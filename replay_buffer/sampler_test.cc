#include "replay_buffer/sampler.h"

#include <gtest/gtest.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using test_records::MakeEpisode;
using test_records::MakeModule;
using test_records::MakeReward;

// 40 episodes: e00..e39 on modules of splits train (m0), validation (m1),
// test (m2) in turn; e07 has a large return; e05 a canary reward.
std::unique_ptr<ReplayStore> MakeBuffer(const std::string& path) {
  auto store = OpenReplayStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  WriteBatch b;
  b.modules = {MakeModule("m0", "train"), MakeModule("m1", "validation"),
               MakeModule("m2", "test")};
  for (int i = 0; i < 40; ++i) {
    b.episodes.push_back(MakeEpisode(absl::StrCat("e", i / 10, i % 10),
                                     absl::StrCat("m", i % 3), 1 + i % 5, i));
    for (v1::Step& s : *b.episodes.back().mutable_steps()) s.set_reward(0);
  }
  b.episodes[7].mutable_steps(0)->set_reward(50);
  b.rewards = {MakeReward("r", "canary", "e05", -3)};
  EXPECT_TRUE((*store)->Write(b).ok());
  return *std::move(store);
}

std::vector<std::string> Draw(ReplayStore& store, SamplerOptions options,
                              int n) {
  auto sampler = Sampler::Create(store, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status();
  auto samples = (*sampler)->SampleEpisodes(n);
  EXPECT_TRUE(samples.ok()) << samples.status();
  std::vector<std::string> ids;
  for (const SampledEpisode& s : *samples)
    ids.push_back(s.episode.episode_id());
  return ids;
}

TEST(SamplerTest, SameSeedSameDrawsAcrossOpens) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  std::vector<std::string> first;
  {
    auto store = MakeBuffer(path);
    SamplerOptions options;
    options.seed = 42;
    first = Draw(*store, options, 25);
    EXPECT_EQ(Draw(*store, options, 25), first);
    options.seed = 43;
    EXPECT_NE(Draw(*store, options, 25), first);
  }
  auto reopened = OpenReplayStore(path);
  ASSERT_TRUE(reopened.ok());
  SamplerOptions options;
  options.seed = 42;
  EXPECT_EQ(Draw(**reopened, options, 25), first);
}

TEST(SamplerTest, UniformCoversTheFilteredSplitOnly) {
  auto store = MakeBuffer(testing::MakeTempDir() + "/buffer.db");
  SamplerOptions options;
  options.filter.split = "train";
  auto sampler = Sampler::Create(*store, options);
  ASSERT_TRUE(sampler.ok());
  EXPECT_EQ((*sampler)->size(), 14u);  // i % 3 == 0 for i < 40
  auto samples = (*sampler)->SampleEpisodes(2000);
  ASSERT_TRUE(samples.ok());
  std::map<std::string, int> counts;
  for (const SampledEpisode& s : *samples) {
    EXPECT_EQ(s.episode.module_hash(), "m0");
    EXPECT_DOUBLE_EQ(s.probability, 1.0 / 14);
    ++counts[s.episode.episode_id()];
  }
  EXPECT_EQ(counts.size(), 14u);
  for (const auto& [id, n] : counts) {
    EXPECT_GT(n, 2000 / 14 / 2) << id;
    EXPECT_LT(n, 2000 / 14 * 2) << id;
  }
  options.filter.split = "nonexistent";
  auto empty = Sampler::Create(*store, options);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*empty)->SampleEpisodes(1).status()));
}

TEST(SamplerTest, PrioritisedDrawsFollowRewardsAndPriorities) {
  auto store = MakeBuffer(testing::MakeTempDir() + "/buffer.db");
  SamplerOptions options;
  options.mode = SamplingMode::kAbsReward;
  options.seed = 1;
  auto sampler = Sampler::Create(*store, options);
  ASSERT_TRUE(sampler.ok());
  auto samples = (*sampler)->SampleEpisodes(200);
  ASSERT_TRUE(samples.ok());
  int big = 0;
  for (const SampledEpisode& s : *samples) {
    if (s.episode.episode_id() == "e07") {
      ++big;
      EXPECT_NEAR(s.probability, 50.001 / (50.001 + 39 * 0.001), 1e-12);
    }
  }
  EXPECT_GT(big, 195);

  // By reward source: only the canary-judged episode, weighted by |-3|.
  options.filter.reward_source = "canary";
  EXPECT_EQ(Draw(*store, options, 3),
            std::vector<std::string>({"e05", "e05", "e05"}));

  // By the learner's priority column, re-read by Refresh().
  options = SamplerOptions();
  options.mode = SamplingMode::kPriority;
  options.epsilon = 0;
  sampler = Sampler::Create(*store, options);
  ASSERT_TRUE(sampler.ok());
  std::vector<std::pair<std::string, double>> priorities;
  auto keys = store->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  for (const EpisodeKey& k : *keys) {
    priorities.push_back({k.episode_id, k.episode_id == "e12" ? 1.0 : 0.0});
  }
  ASSERT_TRUE(store->SetPriorities(priorities).ok());
  ASSERT_TRUE((*sampler)->Refresh().ok());
  samples = (*sampler)->SampleEpisodes(50);
  ASSERT_TRUE(samples.ok());
  for (const SampledEpisode& s : *samples) {
    EXPECT_EQ(s.episode.episode_id(), "e12");
    EXPECT_EQ(s.probability, 1.0);
  }
}

TEST(SamplerTest, StepsAreUniformOverTransitions) {
  auto store = MakeBuffer(testing::MakeTempDir() + "/buffer.db");
  int64_t total_steps = 0;
  auto keys = store->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  for (const EpisodeKey& k : *keys) {
    total_steps += k.num_steps;
  }
  SamplerOptions options;
  options.seed = 7;
  auto sampler = Sampler::Create(*store, options);
  ASSERT_TRUE(sampler.ok());
  auto steps = (*sampler)->SampleSteps(500);
  ASSERT_TRUE(steps.ok()) << steps.status();
  std::map<std::pair<std::string, int>, int> seen;
  for (const SampledStep& s : *steps) {
    EXPECT_EQ(s.episode.steps_size(), 0);
    EXPECT_DOUBLE_EQ(s.probability, 1.0 / total_steps);
    const v1::Episode full =
        (*store->ReadEpisodes({s.episode.episode_id()}))[0];
    EXPECT_EQ(s.step.DebugString(), full.steps(s.step.index()).DebugString());
    ++seen[{s.episode.episode_id(), s.step.index()}];
  }
  EXPECT_GT(seen.size(), static_cast<size_t>(total_steps * 3 / 4));
  auto again = Sampler::Create(*store, options);
  ASSERT_TRUE(again.ok());
  auto repeat = (*again)->SampleSteps(500);
  ASSERT_TRUE(repeat.ok());
  for (size_t i = 0; i < repeat->size(); ++i) {
    EXPECT_EQ((*repeat)[i].step.DebugString(), (*steps)[i].step.DebugString());
  }
}

}  // namespace
}  // namespace phaseloop::replay_buffer
