// The runtime search loop on the example workload (a real Makefile C
// project) through the real wrapper, with a tiny budget counted in
// evaluations and few timed pairs: it checks the hot set, the verdicts, the
// records in a temporary replay buffer and the block list, never speed.
#include "staging_harness/runtime_search/runtime_search.h"

#include <filesystem>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/profiling/profile_collection.h"
#include "staging_harness/runner/runner_test_util.h"
#include "staging_harness/runtime_search/pipeline_vocabulary.h"
#include "staging_harness/runtime_search/runtime_search_report.h"

namespace phaseloop::runtime_search {
namespace {
namespace fs = std::filesystem;

class RuntimeSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<workloads::Workload> loaded = runner::ExampleWorkload();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    workload_ = *loaded;
    absl::StatusOr<runner::Compilers> compilers = runner::RunfilesCompilers();
    ASSERT_TRUE(compilers.ok()) << compilers.status();
    stage_.compilers = *compilers;
    dir_ = testing::MakeTempDir();
    stage_.work_dir = dir_ + "/work";
    options_.max_evaluations = 3;
    options_.budget_s = 600;  // the evaluation count ends it
    options_.search_timing.warmup_passes = 0;
    options_.search_timing.min_pairs = 3;
    options_.search_timing.max_pairs = 3;
    options_.confirm_timing = options_.search_timing;
    options_.confirm_timing.max_pairs = 4;
    options_.runoff_timing = options_.confirm_timing;
    absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> store =
        replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  absl::StatusOr<RuntimeSearchResult> Search() {
    return RunRuntimeSearch(workload_, stage_, options_, store_.get(), log_);
  }

  // The buffer's record of an evaluation with one episode (empty, and a
  // failure, when it cannot be read).
  v1::Episode OnlyEpisode(const Evaluation& e) {
    absl::StatusOr<std::vector<v1::Episode>> episodes =
        store_->ReadEpisodes(e.episode_ids);
    EXPECT_TRUE(episodes.ok()) << episodes.status();
    if (!episodes.ok() || episodes->size() != 1) {
      ADD_FAILURE() << "no single episode for evaluation " << e.index;
      return v1::Episode();
    }
    return (*episodes)[0];
  }

  workloads::Workload workload_;
  staging::StageOptions stage_;
  RuntimeSearchOptions options_;
  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  std::ostringstream log_;
};

// With an execution profile every evaluation is built with it: the
// profile alone is staged first, and the table policies are keyed on the
// profiled build's modules (the profile is in each module, so the
// baseline's hashes would match nothing and every pipeline be refused).
TEST_F(RuntimeSearchTest, ProfileGuidedSearchKeysOnTheProfiledModules) {
  profiling::ProfileOptions profile;
  profile.compilers = stage_.compilers;
  profile.work_dir = dir_ + "/profile";
  profile.out = dir_ + "/example.profdata";
  absl::StatusOr<profiling::CollectedProfile> collected =
      profiling::CollectProfile(workload_, profile, log_);
  ASSERT_TRUE(collected.ok()) << collected.status() << log_.str();
  stage_.candidate_cflags = "-fprofile-instr-use=" + collected->path;
  options_.max_evaluations = 2;
  options_.runoff_contenders = 0;
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_TRUE(result->profiled.has_value());
  EXPECT_EQ(result->profiled->verdict, "measured") << result->profiled->detail;
  ASSERT_EQ(result->hot.size(), 1u);
  EXPECT_EQ(result->hot[0].source, "wordfreq.c");
  // The profile alone is the hot module's -O3 cell, with its staging
  // reward: the evaluations' rewards all include the profile's gain.
  ASSERT_EQ(result->profiled->episode_ids.size(), 1u);
  const v1::Episode alone = OnlyEpisode(*result->profiled);
  EXPECT_EQ(alone.module_hash(), result->hot[0].module_hash);
  EXPECT_EQ(alone.pipeline(), "default<O3>");
  EXPECT_EQ(alone.behaviour_policy(), kSearchBehaviour);
  ASSERT_EQ(alone.steps_size(), 1);
  absl::StatusOr<std::vector<v1::FinalReward>> rewards =
      store_->ReadFinalRewards({.source = "staging"});
  ASSERT_TRUE(rewards.ok()) << rewards.status();
  int alone_rewards = 0;
  for (const v1::FinalReward& r : *rewards) {
    if (r.episode_id() == alone.episode_id()) ++alone_rewards;
  }
  EXPECT_EQ(alone_rewards, 1);
  ASSERT_EQ(result->evaluations.size(), 2u);
  for (const Evaluation& e : result->evaluations) {
    EXPECT_EQ(e.module_hash, result->hot[0].module_hash);
    EXPECT_NE(e.verdict, "refused") << e.detail;
    ASSERT_EQ(e.episode_ids.size(), 1u);
    const v1::Episode episode = OnlyEpisode(e);
    EXPECT_EQ(episode.module_hash(), result->hot[0].module_hash);
    ASSERT_EQ(episode.steps_size(), 1);
    EXPECT_EQ(episode.steps(0).autophase_size(), 56);  // the profiled unit's
  }
  // Winners are confirmed with the profile; with none, the profile alone
  // when it screened above 1.
  if (result->winners.empty() && result->profiled->speedup <= 1) {
    EXPECT_FALSE(result->confirmation.has_value());
  } else {
    ASSERT_TRUE(result->confirmation.has_value());
  }
  EXPECT_FALSE(!result->winners.empty() && result->profile_confirmed);
}

// An LTO search (--candidate-cflags=-flto, both sides linked by lld-16
// through --link-flags): the flags
// alone are staged first, and the wrapper runs each evaluation's pipeline
// as clang's pre-link pipeline (a pipeline it passed to plain clang would
// be "refused"); codegen<...> choices, which the link would ignore, are not
// proposed.
TEST_F(RuntimeSearchTest, AnLtoSearchRunsThePipelinesBeforeTheLink) {
  stage_.candidate_cflags = "-flto";
  stage_.link_flags = {"-fuse-ld=/usr/bin/ld.lld-16"};  // both sides
  options_.max_evaluations = 2;
  options_.runoff_contenders = 0;
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->candidate_cflags, stage_.candidate_cflags);
  EXPECT_EQ(result->link_flags, stage_.link_flags);
  EXPECT_NE(FormatRuntimeSearchTable(*result).find(
                "every build (the baseline's too) linked with "
                "-fuse-ld=/usr/bin/ld.lld-16"),
            std::string::npos);
  ASSERT_TRUE(result->profiled.has_value());
  EXPECT_NE(result->profiled->verdict, "miscompile")
      << result->profiled->detail;
  ASSERT_EQ(result->hot.size(), 1u);
  EXPECT_EQ(result->hot[0].source, "wordfreq.c");
  ASSERT_EQ(result->evaluations.size(), 2u);
  for (const Evaluation& e : result->evaluations) {
    EXPECT_EQ(e.module_hash, result->hot[0].module_hash);
    EXPECT_NE(e.verdict, "refused") << e.detail;
    EXPECT_EQ(e.pipeline.find("codegen<"), std::string::npos) << e.pipeline;
  }
}

// BOLT on top of the pick: timed in full after the search against the
// same baseline, a decision for the whole program that records nothing
// (the layout's gain belongs to no pipeline). A stage option that would
// rewrite every evaluation is refused.
TEST_F(RuntimeSearchTest, BoltIsStagedOnTopOfThePickAndRecordsNothing) {
  stage_.link_flags = {profiling::kBoltLinkFlag};
  options_.max_evaluations = 1;
  options_.runoff_contenders = 0;
  options_.bolt = profiling::BoltOptions{};
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_TRUE(result->bolted.has_value());
  EXPECT_EQ(result->bolted->verdict, "confirmed") << result->bolted->detail;
  EXPECT_NE(result->bolted->pipeline.find("+ BOLT"), std::string::npos);
  EXPECT_TRUE(result->bolted->episode_ids.empty());
  ASSERT_TRUE(result->bolt.has_value());  // what BOLT did, for the report
  ASSERT_FALSE(result->bolt->artifacts.empty());
  EXPECT_TRUE(result->bolt->artifacts[0].optimized)
      << result->bolt->artifacts[0].note;
  EXPECT_EQ(result->bolt_chosen,
            result->bolted->low > 1 &&
                result->bolted->speedup > BoltReference(*result));
  // Only the pick was rewritten, never a search evaluation.
  const std::string log = log_.str();
  const size_t first = log.find("bolt: instrumenting");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("bolt: instrumenting", first + 1), std::string::npos);
  EXPECT_FALSE(fs::exists(stage_.work_dir + "/bolt-bolt"));  // cleaned up
  // Only the search's evaluation and the confirmation's episodes are in
  // the buffer.
  replay_buffer::EpisodeFilter filter;
  filter.objective = "runtime";
  absl::StatusOr<std::vector<replay_buffer::EpisodeKey>> episodes =
      store_->ListEpisodes(filter);
  ASSERT_TRUE(episodes.ok()) << episodes.status();
  const int confirmed =
      result->confirmation ? int(result->confirmation->episode_ids.size()) : 0;
  EXPECT_EQ(int(episodes->size()),
            int(result->evaluations[0].episode_ids.size()) + confirmed);

  // A BOLT that cannot run is the row's verdict; the search stands.
  options_.bolt->llvm_bolt = "/nonexistent/llvm-bolt";
  result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_TRUE(result->bolted.has_value());
  EXPECT_EQ(result->bolted->verdict, "failed");
  EXPECT_FALSE(result->bolt.has_value());
  EXPECT_NE(result->bolted->detail.find("bolt-16"), std::string::npos)
      << result->bolted->detail;
  EXPECT_FALSE(result->bolt_chosen);
  EXPECT_EQ(result->evaluations.size(), 1u);

  stage_.bolt = profiling::BoltOptions{};
  result = Search();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

// What BOLT's row must beat: the confirmed pick, the build flags' own
// figure where every build has them, else 1.
TEST(BoltReferenceTest, ThePickBoltMustBeat) {
  RuntimeSearchResult r;
  EXPECT_EQ(BoltReference(r), 1);  // nothing confirmed: -O3
  Evaluation confirmation;
  confirmation.pipeline = "(winners combined)";
  confirmation.speedup = 1.03;
  confirmation.pairs = 10;
  r.confirmation = confirmation;
  EXPECT_EQ(BoltReference(r), 1);  // winners not confirmed above 1
  r.policy_table = "table";
  EXPECT_EQ(BoltReference(r), 1.03);  // the winning table
  r.policy_table.clear();
  r.candidate_cflags = "-flto";
  confirmation.pipeline = "(build flags alone)";
  confirmation.speedup = 1.008;
  r.confirmation = confirmation;
  EXPECT_EQ(BoltReference(r), 1.008);  // the flags, not confirmed above 1
  r.profile_confirmed = true;
  EXPECT_EQ(BoltReference(r), 1.008);  // the flags, confirmed
  r.profile_confirmed = false;
  r.confirmation->speedup = 0.99;
  EXPECT_EQ(BoltReference(r), 1);  // slower flags: still above -O3
}

TEST_F(RuntimeSearchTest, EvaluatesTheHotModuleAndRecordsEveryEvaluation) {
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->hot.size(), 1u);
  EXPECT_EQ(result->hot[0].source, "wordfreq.c");
  EXPECT_GT(result->hot[0].share, 0.5);
  EXPECT_EQ(result->stop_reason, "max_evaluations");
  ASSERT_EQ(result->evaluations.size(), 3u);

  // The seeded order of the vocabulary for that module (a search without a
  // profile: nothing that only reads one).
  std::vector<std::string> refused;
  const std::vector<Candidate> order =
      SeededOrder(CheckedVocabulary({}, &refused), options_.seed,
                  result->hot[0].module_hash);
  int judged = 0;
  for (size_t i = 0; i < result->evaluations.size(); ++i) {
    const Evaluation& e = result->evaluations[i];
    EXPECT_EQ(e.pipeline, order[i].pipeline);
    EXPECT_EQ(e.module_hash, result->hot[0].module_hash);
    EXPECT_TRUE(e.verdict == "measured" || e.verdict == "identical" ||
                e.verdict == "miscompile")
        << e.verdict << ": " << e.detail;
    EXPECT_EQ(e.pairs, e.verdict == "measured" ? 3 : 0);
    ASSERT_EQ(e.episode_ids.size(), 1u);
    const v1::Episode episode = OnlyEpisode(e);
    EXPECT_EQ(episode.objective(), "runtime");
    EXPECT_EQ(episode.behaviour_policy(), kSearchBehaviour);
    EXPECT_EQ(episode.module_hash(), e.module_hash);
    EXPECT_EQ(episode.pipeline(), e.pipeline);
    // The unoptimised module's features, from the baseline's decision, in
    // the one step the speed learner reads.
    ASSERT_EQ(episode.steps_size(), 1);
    EXPECT_EQ(episode.steps(0).action(), -1);
    EXPECT_EQ(episode.steps(0).autophase_size(), 56);
    EXPECT_EQ(episode.steps(0).inst_count_size(), 70);
    EXPECT_GT(episode.steps(0).inst_count(0), 0);
    if (e.verdict != "miscompile") ++judged;
  }
  // Each measured or identical evaluation has its staging reward, joined by
  // episode_id (the confirmation's episodes too, when there was one).
  replay_buffer::EpisodeFilter filter;
  filter.objective = "runtime";
  filter.reward_source = "staging";
  absl::StatusOr<std::vector<replay_buffer::EpisodeKey>> rewarded =
      store_->ListEpisodes(filter);
  ASSERT_TRUE(rewarded.ok()) << rewarded.status();
  const int confirmed =
      result->confirmation ? int(result->confirmation->episode_ids.size()) : 0;
  int runoff_judged = 0;
  for (const Evaluation& e : result->runoff) {
    if (e.verdict != "miscompile") ++runoff_judged;
  }
  EXPECT_EQ(int(rewarded->size()), judged + runoff_judged + confirmed);
  // The module is in the workload's split (example: train), so the
  // learner's split filter finds its episodes there and nowhere else.
  filter.split = "train";
  absl::StatusOr<std::vector<replay_buffer::EpisodeKey>> in_train =
      store_->ListEpisodes(filter);
  ASSERT_TRUE(in_train.ok()) << in_train.status();
  EXPECT_EQ(in_train->size(), rewarded->size());
  filter.split = "test";
  absl::StatusOr<std::vector<replay_buffer::EpisodeKey>> in_test =
      store_->ListEpisodes(filter);
  ASSERT_TRUE(in_test.ok()) << in_test.status();
  EXPECT_TRUE(in_test->empty());
  EXPECT_EQ(result->confirmation.has_value(), !result->winners.empty());
}

// The runoff times exactly the screen's contenders of the module again,
// best first, each an episode of its own; the winner is the runoff's best
// above 1. Which pipelines contend depends on the machine's noise; what is
// checked holds whatever they are.
TEST_F(RuntimeSearchTest, TheRunoffTimesTheContendersAgainAndPicksTheWinner) {
  options_.max_evaluations = 4;
  options_.runoff_contenders = 2;
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->hot.size(), 1u);
  const std::vector<const Evaluation*> contenders =
      Contenders(result->evaluations, result->hot[0].module_hash, 2);
  ASSERT_EQ(result->runoff.size(), contenders.size()) << log_.str();
  for (size_t i = 0; i < contenders.size(); ++i) {
    const Evaluation& again = result->runoff[i];
    EXPECT_EQ(again.pipeline, contenders[i]->pipeline);
    EXPECT_EQ(again.module_hash, result->hot[0].module_hash);
    EXPECT_EQ(again.index, int(result->evaluations.size() + i + 1));
    EXPECT_NE(again.build_id, "");
    ASSERT_EQ(again.episode_ids.size(), 1u);
    const v1::Episode episode = OnlyEpisode(again);
    EXPECT_EQ(episode.behaviour_policy(), kRunoffBehaviour);
    EXPECT_EQ(episode.pipeline(), again.pipeline);
  }
  EXPECT_TRUE(result->runoff_skipped.empty());
  EXPECT_EQ(result->winners,
            ChooseWinners(result->hot, result->evaluations, result->runoff));
  EXPECT_EQ(result->confirmation.has_value(), !result->winners.empty());

  // Off: no runoff, the screen's best median above 1 wins.
  options_.runoff_contenders = 0;
  stage_.work_dir = dir_ + "/no-runoff";
  absl::StatusOr<RuntimeSearchResult> screened = Search();
  ASSERT_TRUE(screened.ok()) << screened.status() << log_.str();
  EXPECT_TRUE(screened->runoff.empty());
  EXPECT_EQ(screened->winners,
            ChooseWinners(screened->hot, screened->evaluations, {}));
}

Evaluation Timed(const std::string& module, const std::string& pipeline,
                 const std::string& verdict, double speedup) {
  Evaluation e;
  e.module_hash = module;
  e.pipeline = pipeline;
  e.verdict = verdict;
  e.speedup = speedup;
  return e;
}

TEST(RunoffTest, ContendersAreTheMeasuredAboveOneBestFirst) {
  const std::vector<Evaluation> evaluations = {
      Timed("m", "a", "measured", 1.02), Timed("m", "b", "measured", 0.99),
      Timed("m", "c", "measured", 1.05), Timed("m", "d", "identical", 1.0),
      Timed("n", "e", "measured", 1.30), Timed("m", "f", "miscompile", 1.0),
      Timed("m", "g", "measured", 1.02), Timed("m", "h", "measured", 1.01)};
  std::vector<std::string> picked;
  for (const Evaluation* e : Contenders(evaluations, "m", 3)) {
    picked.push_back(e->pipeline);
  }
  // c best; a and g tie at 1.02, the earlier first; h is fourth.
  EXPECT_EQ(picked, (std::vector<std::string>{"c", "a", "g"}));
  EXPECT_TRUE(Contenders(evaluations, "m", 0).empty());
  EXPECT_TRUE(Contenders(evaluations, "absent", 3).empty());
}

TEST(RunoffTest, TheRunoffDecidesWhereItRanAndTheScreenElsewhere) {
  std::vector<HotModule> hot(3);
  hot[0].module_hash = "m";
  hot[1].module_hash = "n";
  hot[2].module_hash = "o";
  const std::vector<Evaluation> screen = {
      Timed("m", "lucky", "measured", 1.20),
      Timed("m", "steady", "measured", 1.05),
      Timed("n", "only", "measured", 1.04),
      Timed("o", "slow", "measured", 0.98)};
  // m's runoff reverses the screen's order; n was not reached.
  std::vector<Evaluation> runoff = {Timed("m", "lucky", "measured", 0.99),
                                    Timed("m", "steady", "measured", 1.03)};
  using Rows = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(ChooseWinners(hot, screen, runoff),
            (Rows{{"m", "steady"}, {"n", "only"}}));
  EXPECT_EQ(ChooseWinners(hot, screen, {}),
            (Rows{{"m", "lucky"}, {"n", "only"}}));
  // Nothing above 1 in m's runoff: m has no winner, whatever the screen said.
  runoff[1].speedup = 0.995;
  EXPECT_EQ(ChooseWinners(hot, screen, runoff), (Rows{{"n", "only"}}));
}

// In a profile-guided search a pipeline must beat the profile alone, whose
// gain every evaluation includes.
TEST(RunoffTest, AProfileGuidedSearchRaisesTheFloor) {
  std::vector<HotModule> hot(2);
  hot[0].module_hash = "m";
  hot[1].module_hash = "n";
  const std::vector<Evaluation> screen = {
      Timed("m", "better", "measured", 1.12),
      Timed("m", "worse", "measured", 1.08),
      Timed("n", "worse", "measured", 1.09)};
  std::vector<std::string> picked;
  for (const Evaluation* e : Contenders(screen, "m", 3, 1.10)) {
    picked.push_back(e->pipeline);
  }
  EXPECT_EQ(picked, (std::vector<std::string>{"better"}));
  using Rows = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(ChooseWinners(hot, screen, {}, 1.10), (Rows{{"m", "better"}}));
  EXPECT_TRUE(ChooseWinners(hot, screen, {}, 1.15).empty());
}

// A budget the baseline build alone uses up (a loaded machine) still gives
// one evaluation, then stops on the budget.
TEST_F(RuntimeSearchTest, ABudgetSpentOnTheBaselineStillEvaluatesOnce) {
  options_.max_evaluations = 0;
  options_.budget_s = 0.001;
  absl::StatusOr<RuntimeSearchResult> result = Search();
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->evaluations.size(), 1u);
  EXPECT_EQ(result->stop_reason, "budget");
}

TEST_F(RuntimeSearchTest, NeverProposesAPairTheBufferBlocks) {
  options_.max_evaluations = 1;
  absl::StatusOr<RuntimeSearchResult> first = Search();
  ASSERT_TRUE(first.ok()) << first.status() << log_.str();
  ASSERT_EQ(first->evaluations.size(), 1u);
  const Evaluation& tried = first->evaluations[0];

  v1::Miscompile miscompile;
  miscompile.set_workload("example");
  miscompile.set_run("generated");
  miscompile.set_verdict(replay_buffer::kVerdictMiscompile);
  v1::BlamedPipeline* blamed = miscompile.add_blamed();
  blamed->set_module_hash(tried.module_hash);
  blamed->set_pipeline(tried.pipeline);
  ASSERT_TRUE(store_->AddMiscompile(miscompile).ok());

  absl::StatusOr<RuntimeSearchResult> second = Search();
  ASSERT_TRUE(second.ok()) << second.status() << log_.str();
  EXPECT_EQ(second->blocked_skipped, 1);
  ASSERT_EQ(second->evaluations.size(), 1u);
  EXPECT_NE(second->evaluations[0].pipeline, tried.pipeline);
}

// Every build of a search shares the object cache: an evaluation changes
// the hot module's pipeline only, so the other unit's object is reused;
// with the cache off every unit of every build is compiled.
TEST_F(RuntimeSearchTest, EvaluationBuildsReuseTheUnchangedObjects) {
  absl::StatusOr<workloads::Workload> two =
      runner::TwoUnitExampleWorkload(dir_);
  ASSERT_TRUE(two.ok()) << two.status();
  workload_ = *two;
  options_.max_evaluations = 2;
  absl::StatusOr<RuntimeSearchResult> cached = Search();
  ASSERT_TRUE(cached.ok()) << cached.status() << log_.str();
  EXPECT_EQ(cached->object_cache_dir, stage_.work_dir + "/object-cache");
  ASSERT_EQ(cached->hot.size(), 1u);
  EXPECT_EQ(cached->hot[0].source, "wordfreq.c");
  ASSERT_EQ(cached->evaluations.size(), 2u);
  for (const Evaluation& e : cached->evaluations) {
    EXPECT_EQ(e.objects_reused, 1) << e.pipeline;  // extra.c
    EXPECT_EQ(e.objects_compiled, 1) << e.pipeline;
    EXPECT_GT(e.build_s, 0);
  }

  options_.object_cache = false;
  options_.max_evaluations = 1;
  stage_.work_dir = dir_ + "/uncached";
  absl::StatusOr<RuntimeSearchResult> uncached = Search();
  ASSERT_TRUE(uncached.ok()) << uncached.status() << log_.str();
  EXPECT_EQ(uncached->object_cache_dir, "");
  ASSERT_EQ(uncached->evaluations.size(), 1u);
  EXPECT_EQ(uncached->evaluations[0].objects_reused, 0);
  EXPECT_EQ(uncached->evaluations[0].objects_compiled, 2);
  EXPECT_FALSE(fs::exists(stage_.work_dir + "/object-cache"));
}

}  // namespace
}  // namespace phaseloop::runtime_search
