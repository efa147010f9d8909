#include "staging_harness/search/search_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/testing/test_util.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/session/compilation_session.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "staging_harness/search/episode_file.h"

namespace phaseloop::search {
namespace {

constexpr char kWorker[] = "staging_harness/workers/session_worker";
const std::vector<ModuleInput> kTwoFixtures = {
    {"globals.c", "compiler_driver/fixtures/globals.c", ""},
    {"recursion.c", "compiler_driver/fixtures/recursion.c", ""}};

int A(const char* name) { return *passes::ActionSpace::Llvm16().Find(name); }

struct SearchRun {
  std::vector<ModuleResult> results;
  std::vector<v1::Episode> episodes;
};

// Far more than any search here needs: the clock is only a safety net
// against a hung test, never what ends a search (CheckRun checks that).
constexpr double kSafetySeconds = 3600;

// Searches `modules`, each until it has applied `max_evaluations` actions (or
// reached a local optimum): counted work, so the same search runs on an idle
// or a loaded machine and every assertion below sees the same result.
SearchRun Search(Strategy strategy, Objective objective,
                 int64_t max_evaluations,
                 const std::vector<ModuleInput>& modules = kTwoFixtures,
                 std::vector<std::string> worker_args = {},
                 const std::vector<KnownBest>& known = {},
                 int call_timeout_ms = 60000) {
  SearchRunOptions options;
  options.worker.worker_binary = kWorker;
  options.worker.worker_args = std::move(worker_args);
  options.worker.call_timeout = std::chrono::milliseconds(call_timeout_ms);
  options.workers = 2;
  options.strategy.strategy = strategy;
  options.strategy.episode_length = 12;
  options.strategy.beam_width = 3;
  options.objective = objective;
  options.budget_seconds = kSafetySeconds;
  options.max_evaluations = max_evaluations;
  options.seed = 7;
  const std::string path = testing::MakeTempDir() + "/episodes.bin";
  SearchRun run;
  {
    auto sink = FileEpisodeSink::Open(path);
    EXPECT_TRUE(sink.ok()) << sink.status();
    if (!sink.ok()) return run;
    auto results = RunSearch(modules, options, known, **sink);
    EXPECT_TRUE(results.ok()) << results.status();
    if (results.ok()) run.results = std::move(*results);
  }
  auto contents = ReadEpisodeFile(path);
  EXPECT_TRUE(contents.ok()) << contents.status();
  if (contents.ok()) run.episodes = std::move(contents->episodes);
  return run;
}

std::vector<int> AppliedActions(const v1::Episode& e) {
  std::vector<int> out;
  for (const v1::Step& s : e.steps()) {
    if (!s.failed()) out.push_back(s.action());
  }
  return out;
}

// Episodes are well formed and their rewards follow their objective's trace.
void CheckRun(const SearchRun& run, const char* behaviour,
              Objective objective) {
  std::map<std::string, const ModuleResult*> by_hash;
  for (const ModuleResult& r : run.results) {
    ASSERT_TRUE(r.status.ok()) << r.input.name << ": " << r.status;
    by_hash[r.module_hash] = &r;
    const int64_t found =
        objective == Objective::kIrCount ? r.ir_count : r.text_size;
    const int64_t start = objective == Objective::kIrCount
                              ? r.reference.ir_count_start
                              : r.reference.text_size_start;
    EXPECT_LE(found, start)
        << r.input.name;  // no worse than the empty sequence
    EXPECT_GT(r.text_size, 0);
    // The whole object holds more than .text (.eh_frame at least).
    EXPECT_GT(r.alloc_size, r.text_size) << r.input.name;
    EXPECT_GT(r.reference.alloc_size_start, r.reference.text_size_start);
    EXPECT_GT(r.reference.alloc_size_oz, r.reference.text_size_oz);
    EXPECT_GT(r.episodes, 0) << r.input.name;
    // Work ended the search, not the clock.
    EXPECT_FALSE(r.time_limited) << r.input.name;
  }
  ASSERT_FALSE(run.episodes.empty());
  std::set<std::string> ids;
  std::map<std::string, const v1::Episode*> by_id;
  for (const v1::Episode& e : run.episodes) {
    EXPECT_TRUE(ids.insert(e.episode_id()).second)
        << "duplicate " << e.episode_id();
    by_id[e.episode_id()] = &e;
    ASSERT_EQ(by_hash.count(e.module_hash()), 1u);
    const ModuleReference& ref = by_hash[e.module_hash()]->reference;
    EXPECT_EQ(e.action_space_version(), "llvm-16/v1");
    EXPECT_EQ(e.objective(), ObjectiveName(objective));
    EXPECT_EQ(e.behaviour_policy(), behaviour);
    EXPECT_FALSE(e.steps().empty());
    const bool ir = objective == Objective::kIrCount;
    const int64_t start = ir ? ref.ir_count_start : ref.text_size_start;
    const int64_t oz = ir ? ref.ir_count_oz : ref.text_size_oz;
    const double scale =
        start - oz > 0 ? start - oz : std::max<int64_t>(start, 1);
    int64_t previous = start;
    int64_t previous_ir = ref.ir_count_start;
    for (int i = 0; i < e.steps_size(); ++i) {
      const v1::Step& s = e.steps(i);
      EXPECT_EQ(s.index(), i);
      EXPECT_EQ(s.autophase_size(), 56);
      EXPECT_EQ(s.inst_count_size(), 70);
      EXPECT_GT(s.action_probability(), 0);
      EXPECT_LE(s.action_probability(), 1);
      EXPECT_EQ(s.action_name(),
                passes::ActionSpace::Llvm16().at(s.action()).name);
      const int64_t after = ir ? s.ir_count_after() : s.text_size_after();
      if (s.failed()) {
        EXPECT_EQ(after, previous);
        EXPECT_EQ(s.reward(), 0);
      }
      EXPECT_DOUBLE_EQ(s.reward(), (previous - after) / scale) << "step " << i;
      // The features are those of the state before the action.
      EXPECT_EQ(s.inst_count(0), previous_ir) << "step " << i;
      previous = after;
      previous_ir = s.ir_count_after();
    }
    EXPECT_EQ(e.final_ir_count(), previous_ir);
    EXPECT_GT(e.final_text_size(), 0);
    EXPECT_GT(e.final_alloc_size(), e.final_text_size());
    if (!ir) {
      EXPECT_EQ(e.final_text_size(), previous);
    }
  }
  // The best sequence of each module is a prefix of the episode it names.
  for (const ModuleResult& r : run.results) {
    if (r.best_actions.empty()) continue;
    ASSERT_EQ(by_id.count(r.best_episode_id), 1u) << r.best_episode_id;
    const std::vector<int> applied = AppliedActions(*by_id[r.best_episode_id]);
    ASSERT_GE(applied.size(), r.best_actions.size());
    EXPECT_TRUE(std::equal(r.best_actions.begin(), r.best_actions.end(),
                           applied.begin()));
  }
}

class EveryStrategy : public ::testing::TestWithParam<Strategy> {};

TEST_P(EveryStrategy, NoWorseThanTheEmptySequenceWithWellFormedEpisodes) {
  const SearchRun run =
      Search(GetParam(), Objective::kIrCount, /*max_evaluations=*/150);
  CheckRun(run, StrategyName(GetParam()), Objective::kIrCount);
  for (const ModuleResult& r : run.results) {
    EXPECT_LT(r.ir_count, r.reference.ir_count_start) << r.input.name;
    // Random search never stops early; the others do only at an optimum,
    // which 150 actions do not reach on these modules.
    EXPECT_EQ(r.evaluations, 150) << r.input.name;
  }
  if (GetParam() == Strategy::kRandom) {
    for (const v1::Episode& e : run.episodes) {
      EXPECT_LE(e.steps_size(), 12);
      for (const v1::Step& s : e.steps()) {
        EXPECT_DOUBLE_EQ(s.action_probability(), 1.0 / 122);
      }
    }
  }
  if (GetParam() == Strategy::kGreedy) {
    ASSERT_EQ(run.episodes.size(), 2u);  // one path per module
  }
}

INSTANTIATE_TEST_SUITE_P(Search, EveryStrategy,
                         ::testing::Values(Strategy::kRandom, Strategy::kGreedy,
                                           Strategy::kBeam, Strategy::kGuided),
                         [](const auto& info) {
                           return StrategyName(info.param);
                         });

// Both sizes of the object clang's codegen makes of `path` after `actions`,
// measured in this process: a session of its own, an emitter of its own.
codegen::ObjectSizes SizesAfter(const std::string& path,
                                const std::vector<int>& actions) {
  auto session = session::CompilationSession::StartFromFile(
      path, ir::FrontendOptions{}, session::SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  EXPECT_TRUE((*session)->Step(actions).ok());
  const llvm::Module& module = (*session)->module();
  auto emitter = codegen::ObjectEmitter::ForModule(
      module, ir::CodegenLevel(ir::OptLevel::kOz));
  EXPECT_TRUE(emitter.ok()) << emitter.status();
  if (!emitter.ok()) return {};
  auto object = (*emitter)->EmitObject(llvm::CloneModule(module));
  EXPECT_TRUE(object.ok()) << object.status();
  if (!object.ok()) return {};
  auto sizes = codegen::MeasureObjectSizes(*object);
  EXPECT_TRUE(sizes.ok()) << sizes.status();
  return sizes.ok() ? *sizes : codegen::ObjectSizes{};
}

// Rewards follow text_size, and the start, -Oz and found states' sizes (the
// whole object and .text) are those of the objects themselves.
TEST(SearchPool, TextSizeObjectiveRewardsFollowTextSize) {
  const SearchRun run =
      Search(Strategy::kGreedy, Objective::kTextSize,
             /*max_evaluations=*/130);  // one level of 122 and a few more
  CheckRun(run, "greedy", Objective::kTextSize);
  for (const ModuleResult& r : run.results) {
    ASSERT_FALSE(r.best_actions.empty()) << r.input.name;
    const codegen::ObjectSizes start = SizesAfter(r.input.path, {});
    EXPECT_EQ(r.reference.alloc_size_start, start.alloc_size) << r.input.name;
    EXPECT_EQ(r.reference.text_size_start, start.text_size) << r.input.name;
    const codegen::ObjectSizes found = SizesAfter(r.input.path, r.best_actions);
    EXPECT_EQ(r.alloc_size, found.alloc_size) << r.input.name;
    EXPECT_EQ(r.text_size, found.text_size) << r.input.name;
    auto oz = session::FileBaselines(r.input.path, ir::FrontendOptions{},
                                     {ir::OptLevel::kOz});
    ASSERT_TRUE(oz.ok()) << oz.status();
    EXPECT_EQ(r.reference.alloc_size_oz, oz->at(0).alloc_size);
    EXPECT_EQ(r.reference.text_size_oz, oz->at(0).text_size);
  }
  // The episode the best sequence came from ends in a state at least as
  // small, and says how large its whole object is.
  for (const v1::Episode& e : run.episodes) {
    for (const ModuleResult& r : run.results) {
      if (e.episode_id() != r.best_episode_id) continue;
      EXPECT_EQ(e.final_alloc_size(),
                SizesAfter(r.input.path, AppliedActions(e)).alloc_size);
    }
  }
}

TEST(SearchPool, CrashingActionIsAFailedStepAndTheSearchCompletes) {
  const SearchRun run =
      Search(Strategy::kGreedy, Objective::kIrCount,
             /*max_evaluations=*/250,  // two levels: instcombine crashes twice
             {kTwoFixtures[0]}, {"--inject-crash-action=instcombine"});
  CheckRun(run, "greedy", Objective::kIrCount);
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results[0].failed_steps, 2);
  // A crash recurs on any machine: not a timed-out step.
  EXPECT_EQ(run.results[0].timed_out_steps, 0);
  EXPECT_LT(run.results[0].ir_count, run.results[0].reference.ir_count_start);
  int crashed = 0;
  for (const v1::Episode& e : run.episodes) {
    for (const v1::Step& s : e.steps()) {
      if (s.failed()) {
        EXPECT_EQ(s.action(), A("instcombine"));
        ++crashed;
      }
    }
  }
  EXPECT_EQ(crashed, 2);
  for (int a : run.results[0].best_actions) EXPECT_NE(a, A("instcombine"));
}

TEST(SearchPool, HangingActionIsAFailedStep) {
  const SearchRun run =
      Search(Strategy::kGreedy, Objective::kIrCount,
             /*max_evaluations=*/122,  // the first level: adce tried once
             {kTwoFixtures[0]}, {"--inject-hang-action=adce"}, {},
             // Long enough that no real step or worker restart reaches it
             // under load; the hanging action always does.
             /*call_timeout_ms=*/5000);
  CheckRun(run, "greedy", Objective::kIrCount);
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results[0].failed_steps, 1);
  EXPECT_EQ(run.results[0].timed_out_steps, 1);
  bool hung = false;
  for (const v1::Step& s : run.episodes.at(0).steps()) {
    hung |= s.failed() && s.action() == A("adce");
  }
  EXPECT_TRUE(hung);
}

TEST(SearchPool, GuidedReplaysTheNearestBestSequence) {
  // A best sequence known for another module with the same features.
  const std::vector<int> sequence = {
      A("sroa"), A("instcombine"), A("simplifycfg"), A("gvn"), A("globalopt")};
  const SearchRun probe = Search(Strategy::kRandom, Objective::kIrCount,
                                 /*max_evaluations=*/1, {kTwoFixtures[1]});
  ASSERT_EQ(probe.results.size(), 1u);
  KnownBest known;
  known.best.set_module_hash("another-module");
  known.best.set_objective("ir_count");
  known.best.set_action_space_version("llvm-16/v1");
  for (int a : sequence) known.best.add_actions(a);
  known.autophase = probe.results[0].start_autophase;
  KnownBest far = known;
  far.best.set_module_hash("far-module");
  far.best.clear_actions();
  far.best.add_actions(A("loop-unroll"));
  far.autophase.assign(56, 1);

  // The two replays (6 actions), a greedy level, then random episodes.
  const SearchRun run =
      Search(Strategy::kGuided, Objective::kIrCount, /*max_evaluations=*/140,
             {kTwoFixtures[1]}, {}, {far, known});
  CheckRun(run, "guided", Objective::kIrCount);
  ASSERT_GE(run.episodes.size(), 2u);
  // Nearest first, one step at a time, propensity 1.
  EXPECT_EQ(AppliedActions(run.episodes[0]), sequence);
  for (const v1::Step& s : run.episodes[0].steps()) {
    EXPECT_EQ(s.action_probability(), 1.0);
  }
  EXPECT_EQ(AppliedActions(run.episodes[1]),
            std::vector<int>{A("loop-unroll")});
  // The search is at least as good as the replayed sequence.
  EXPECT_LE(run.results[0].ir_count,
            run.episodes[0].steps().rbegin()->ir_count_after());
}

}  // namespace
}  // namespace phaseloop::search
