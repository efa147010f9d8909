#include "staging_harness/search/module_search.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "replay_buffer/objective_values.h"
#include "staging_harness/workers/worker_client.h"

namespace phaseloop::search {
namespace {

constexpr char kWorker[] = "staging_harness/workers/session_worker";

int A(const char* name) { return *passes::ActionSpace::Llvm16().Find(name); }

// The fixture program `name` (e.g. "bits.c") among the test's data.
std::string Fixture(const std::string& name) {
  return testing::FixturePath(name);
}

// One module's root session on a real session worker and a ModuleSearch over
// it, set up the way search_pool.cc does (the -Oz reference from the real
// -Oz pipeline) and logging into `episodes`. Not movable: the log points here.
struct Harness {
  std::unique_ptr<service::WorkerProcess> worker;
  std::unique_ptr<service::RemoteSession> root;
  v1::StartSessionReply reply;
  StateObservation start;
  ModuleReference reference;
  std::vector<v1::Episode> episodes;
  absl::Status log_status;  // what the log returns
  std::unique_ptr<ModuleSearch> search;

  // Another search over the same root session.
  std::unique_ptr<ModuleSearch> NewSearch(const ModuleSearchOptions& options,
                                          const ModuleReference& ref) {
    return std::make_unique<ModuleSearch>(*root, start, reply, ref, options,
                                          [this](const v1::Episode& e) {
                                            episodes.push_back(e);
                                            return log_status;
                                          });
  }
};

std::unique_ptr<Harness> Open(const std::string& fixture,
                              const ModuleSearchOptions& options,
                              std::vector<std::string> worker_args = {}) {
  auto h = std::make_unique<Harness>();
  service::WorkerOptions worker_options;
  worker_options.worker_binary = kWorker;
  worker_options.worker_args = std::move(worker_args);
  auto worker = service::WorkerProcess::Start(worker_options);
  EXPECT_TRUE(worker.ok()) << worker.status();
  if (!worker.ok()) return nullptr;
  h->worker = std::move(*worker);
  v1::ModuleSource source;
  source.set_path(Fixture(fixture));
  auto root = service::RemoteSession::Start(
      *h->worker, source,
      {v1::IR_COUNT, v1::TEXT_SIZE, v1::ALLOC_SIZE, v1::AUTOPHASE,
       v1::INST_COUNT, v1::MODULE_HASH},
      &h->reply);
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return nullptr;
  h->root = std::move(*root);
  h->start = ModuleSearch::Parse(h->reply.observations());
  auto oz = session::FileBaselines(source.path(), ir::FrontendOptions{},
                                   {ir::OptLevel::kOz});
  EXPECT_TRUE(oz.ok()) << oz.status();
  if (!oz.ok()) return nullptr;
  h->reference = {h->start.ir_count,   h->start.text_size,
                  oz->at(0).ir_count,  oz->at(0).text_size,
                  h->start.alloc_size, oz->at(0).alloc_size};
  h->search = h->NewSearch(options, h->reference);
  return h;
}

// Advances `t` by the action `name`; whether it applied (an error of the
// worker fails the test).
bool Apply(ModuleSearch& search, Trajectory& t, const char* name) {
  absl::StatusOr<bool> applied = search.Advance(t, A(name), 1.0);
  EXPECT_TRUE(applied.ok()) << name << ": " << applied.status();
  return applied.ok() && *applied;
}

ModuleSearchOptions Options(Objective objective = Objective::kIrCount,
                            int64_t max_evaluations = 0) {
  ModuleSearchOptions options;
  options.objective = objective;
  options.budget_seconds = 3600;  // never the clock: budgets here are counted
  options.max_evaluations = max_evaluations;
  options.seed = 7;
  options.run_id = "unit-run";
  return options;
}

TEST(ModuleSearch, MaxEvaluationsEndsTheSearchAndTheClockDidNot) {
  auto h = Open("bits.c", Options(Objective::kIrCount, /*max_evaluations=*/5));
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(search.OutOfBudget());
  EXPECT_EQ(search.evaluations(), 0);
  // A tried action counts as much as an applied one.
  ASSERT_TRUE(search.TryAction(*t, A("sroa"), 1.0).ok());
  EXPECT_EQ(search.evaluations(), 1);
  const std::vector<int> actions = {A("sroa"),        A("instcombine"),
                                    A("simplifycfg"), A("gvn"),
                                    A("dse"),         A("adce")};
  int applied = 0;
  while (!search.OutOfBudget()) {
    ASSERT_LT(applied, 4) << "max_evaluations did not end the search";
    auto ok = search.Advance(*t, actions[applied++], 1.0);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_TRUE(*ok);
  }
  EXPECT_EQ(applied, 4);
  EXPECT_EQ(search.evaluations(), 5);
  EXPECT_EQ(t->steps.size(), 4u);
  EXPECT_TRUE(search.OutOfBudget());
  EXPECT_FALSE(search.time_limited());
}

TEST(ModuleSearch, SpentClockIsTimeLimited) {
  // A zero-second budget is spent before any action: deterministic, no timing.
  ModuleSearchOptions options =
      Options(Objective::kIrCount, /*max_evaluations=*/100);
  options.budget_seconds = 0;
  auto h = Open("bits.c", options);
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->search->time_limited());
  EXPECT_TRUE(h->search->OutOfBudget());
  EXPECT_TRUE(h->search->time_limited());
  EXPECT_EQ(h->search->evaluations(), 0);
}

// A stop signal ends the search at its next budget check, as a spent budget
// does, and says so (a search-jobs worker then leaves the job uncommitted).
TEST(ModuleSearch, AStopFlagEndsTheSearchAndSaysSo) {
  std::atomic<bool> stop{false};
  ModuleSearchOptions options =
      Options(Objective::kIrCount, /*max_evaluations=*/100);
  options.stop = &stop;
  auto h = Open("bits.c", options);
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->search->OutOfBudget());
  EXPECT_FALSE(h->search->stopped());
  stop = true;
  EXPECT_TRUE(h->search->OutOfBudget());
  EXPECT_TRUE(h->search->stopped());
  EXPECT_FALSE(h->search->time_limited());

  // A search whose budget is spent is whole, even with the signal set: its
  // job is committed, not worked again.
  options.budget_seconds = 0;
  auto spent = Open("bits.c", options);
  ASSERT_NE(spent, nullptr);
  EXPECT_TRUE(spent->search->OutOfBudget());
  EXPECT_FALSE(spent->search->stopped());
  EXPECT_TRUE(spent->search->time_limited());
}

// Every step's reward is (v_before - v_after) / (v_start - v_Oz), so a path
// from the start to -Oz's figure earns 1 in total.
void CheckRewardsFollowOz(Objective objective) {
  auto h = Open("bits.c", Options(objective));
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  const ModuleReference& ref = h->reference;
  const std::string measure = ObjectiveName(objective);
  const int64_t v_start = measure == "ir_count"    ? ref.ir_count_start
                          : measure == "text_size" ? ref.text_size_start
                                                   : ref.alloc_size_start;
  const int64_t v_oz = measure == "ir_count"    ? ref.ir_count_oz
                       : measure == "text_size" ? ref.text_size_oz
                                                : ref.alloc_size_oz;
  ASSERT_GT(v_start, v_oz) << "the fixture should gain from -Oz";
  EXPECT_EQ(search.Value(search.start()), v_start);
  const double scale = static_cast<double>(v_start - v_oz);
  EXPECT_DOUBLE_EQ(search.Reward(v_start, v_oz), 1.0);
  EXPECT_DOUBLE_EQ(search.Reward(v_oz, v_start), -1.0);
  EXPECT_DOUBLE_EQ(search.Reward(v_start, v_start), 0.0);

  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok()) << t.status();
  int64_t before = v_start;
  double total = 0;
  // reg2mem makes the module bigger: a negative reward.
  for (const char* name : {"sroa", "instcombine", "reg2mem", "simplifycfg"}) {
    auto ok = search.Advance(*t, A(name), 0.5);
    ASSERT_TRUE(ok.ok()) << ok.status();
    ASSERT_TRUE(*ok) << name;
    const v1::Step& s = t->steps.back();
    const int64_t after = replay_buffer::StepValue(s, measure);
    EXPECT_EQ(after, search.Value(t->state)) << name;
    EXPECT_DOUBLE_EQ(s.reward(), (before - after) / scale) << name;
    EXPECT_DOUBLE_EQ(s.reward(), search.Reward(before, after)) << name;
    EXPECT_EQ(s.action(), A(name));
    EXPECT_EQ(s.action_name(), name);
    EXPECT_EQ(s.action_probability(), 0.5);
    EXPECT_FALSE(s.failed());
    total += s.reward();
    before = after;
  }
  EXPECT_LT(t->steps[2].reward(), 0) << "reg2mem";
  EXPECT_NEAR(total, (v_start - search.Value(t->state)) / scale, 1e-12);
}

TEST(ModuleSearch, IrCountRewardsAreNormalisedByOz) {
  CheckRewardsFollowOz(Objective::kIrCount);
}

TEST(ModuleSearch, TextSizeRewardsAreNormalisedByOz) {
  CheckRewardsFollowOz(Objective::kTextSize);
}

// The size objective is the whole object: every step records its allocated
// bytes (and .text beside them), and rewards follow them.
TEST(ModuleSearch, AllocSizeRewardsAreNormalisedByOz) {
  CheckRewardsFollowOz(Objective::kAllocSize);
}

TEST(ModuleSearch, RewardScaleIsTheStartValueWhenOzGainsNothing) {
  auto h = Open("bits.c", Options());
  ASSERT_NE(h, nullptr);
  // -Oz no better than the start: the start value is the scale.
  auto same = h->NewSearch(Options(), {100, 0, 100, 0});
  EXPECT_DOUBLE_EQ(same->Reward(100, 90), 0.1);
  auto worse = h->NewSearch(Options(), {100, 0, 130, 0});
  EXPECT_DOUBLE_EQ(worse->Reward(100, 75), 0.25);
  // Nothing to scale by: the denominator is at least 1.
  auto empty = h->NewSearch(Options(), {0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(empty->Reward(5, 3), 2.0);
  // The other objective's figures are not used.
  auto text = h->NewSearch(Options(Objective::kTextSize), {100, 50, 10, 40});
  EXPECT_DOUBLE_EQ(text->Reward(50, 45), 0.5);
  auto alloc =
      h->NewSearch(Options(Objective::kAllocSize), {100, 50, 10, 40, 300, 200});
  EXPECT_DOUBLE_EQ(alloc->Reward(300, 250), 0.5);
}

TEST(ModuleSearch, BestStateIsNeverWorseThanTheStartAndMovesOnlyOnImprovement) {
  auto h = Open("bits.c", Options());
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  const int64_t start_value = search.Value(search.start());
  EXPECT_EQ(search.best_value(), start_value);
  EXPECT_TRUE(search.best_actions().empty());
  EXPECT_TRUE(search.best_episode_id().empty());

  // The start state itself, and a worse one, change nothing.
  auto at_start = search.StartTrajectory();
  ASSERT_TRUE(at_start.ok());
  search.OfferBest(*at_start);
  EXPECT_EQ(search.best_value(), start_value);
  EXPECT_TRUE(search.best_actions().empty());
  EXPECT_TRUE(search.best_episode_id().empty());
  auto worse = search.StartTrajectory();
  ASSERT_TRUE(worse.ok());
  ASSERT_TRUE(Apply(search, *worse, "reg2mem"));
  ASSERT_GT(search.Value(worse->state), start_value);
  search.OfferBest(*worse);
  EXPECT_EQ(search.best_value(), start_value);
  EXPECT_TRUE(search.best_actions().empty());

  // An improvement is taken, with the session's history and the episode id.
  auto better = search.StartTrajectory();
  ASSERT_TRUE(better.ok());
  ASSERT_TRUE(Apply(search, *better, "sroa"));
  ASSERT_LT(search.Value(better->state), start_value);
  search.OfferBest(*better);
  EXPECT_EQ(search.best_value(), search.Value(better->state));
  EXPECT_EQ(search.best_actions(), std::vector<int>{A("sroa")});
  EXPECT_EQ(search.best_episode_id(), better->episode_id);

  // Equal (forceattrs leaves the count as it is) on a longer path, or worse:
  // the best stays.
  auto equal = search.ForkTrajectory(*better);
  ASSERT_TRUE(equal.ok());
  ASSERT_TRUE(Apply(search, *equal, "forceattrs"));
  ASSERT_EQ(search.Value(equal->state), search.Value(better->state));
  search.OfferBest(*equal);
  auto worse_again = search.ForkTrajectory(*better);
  ASSERT_TRUE(worse_again.ok());
  ASSERT_TRUE(Apply(search, *worse_again, "reg2mem"));
  search.OfferBest(*worse_again);
  search.OfferBest(*worse);
  search.OfferBest(*at_start);
  EXPECT_EQ(search.best_value(), search.Value(better->state));
  EXPECT_EQ(search.best_actions(), std::vector<int>{A("sroa")});
  EXPECT_EQ(search.best_episode_id(), better->episode_id);

  // A further improvement moves it again.
  ASSERT_TRUE(Apply(search, *equal, "instcombine"));
  ASSERT_LT(search.Value(equal->state), search.best_value());
  search.OfferBest(*equal);
  EXPECT_EQ(search.best_value(), search.Value(equal->state));
  EXPECT_EQ(search.best_actions(),
            (std::vector<int>{A("sroa"), A("forceattrs"), A("instcombine")}));
  EXPECT_EQ(search.best_episode_id(), equal->episode_id);
  EXPECT_LE(search.best_value(), start_value);
}

TEST(ModuleSearch, ForkAndTryActionLeaveTheirSourceUnchanged) {
  auto h = Open("bits.c", Options());
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->state.ir_count, search.start().ir_count);
  EXPECT_TRUE(t->steps.empty());
  ASSERT_TRUE(Apply(search, *t, "sroa"));
  const int64_t value = search.Value(t->state);

  auto c = search.TryAction(*t, A("instcombine"), 0.25);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->failed);
  ASSERT_NE(c->session, nullptr);
  EXPECT_EQ(c->session->history(),
            (std::vector<int>{A("sroa"), A("instcombine")}));
  EXPECT_LT(search.Value(c->state), value);
  EXPECT_EQ(c->step.action(), A("instcombine"));
  EXPECT_EQ(c->step.action_probability(), 0.25);
  EXPECT_EQ(c->step.ir_count_after(), c->state.ir_count);
  // The candidate's features are those of the state it was tried from.
  EXPECT_EQ(c->step.inst_count(0), t->state.ir_count);
  EXPECT_EQ(t->session->history(), std::vector<int>{A("sroa")});
  EXPECT_EQ(t->steps.size(), 1u);
  EXPECT_EQ(search.Value(t->state), value);

  auto fork = search.ForkTrajectory(*t);
  ASSERT_TRUE(fork.ok());
  EXPECT_NE(fork->episode_id, t->episode_id);
  ASSERT_EQ(fork->steps.size(), 1u);
  EXPECT_EQ(fork->steps[0].SerializeAsString(),
            t->steps[0].SerializeAsString());
  ASSERT_TRUE(Apply(search, *fork, "instcombine"));
  EXPECT_EQ(fork->steps.back().index(), 1);
  EXPECT_EQ(fork->state.ir_count, c->state.ir_count);
  EXPECT_EQ(t->session->history(), std::vector<int>{A("sroa")});
  EXPECT_EQ(t->steps.size(), 1u);
}

TEST(ModuleSearch, EveryEpisodeIdStartsWithTheRunIdAndIsUnique) {
  auto h = Open("bits.c", Options());
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  const std::string prefix =
      "unit-run-" + search.module_hash().substr(0, 12) + "-";
  std::set<std::string> ids;
  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok());
  ids.insert(t->episode_id);
  auto fork = search.ForkTrajectory(*t);
  ASSERT_TRUE(fork.ok());
  ids.insert(fork->episode_id);
  for (int i = 0; i < 5; ++i) ids.insert(search.NewEpisodeId());
  EXPECT_EQ(ids.size(), 7u);
  for (const std::string& id : ids) {
    EXPECT_EQ(id.rfind(prefix, 0), 0u) << id;
  }
  // Another run over the same module has its own ids.
  ModuleSearchOptions other = Options();
  other.run_id = "other-run";
  auto second = h->NewSearch(other, h->reference);
  const std::string id = second->NewEpisodeId();
  EXPECT_EQ(id.rfind("other-run-", 0), 0u) << id;
  EXPECT_EQ(ids.count(id), 0u);
}

TEST(ModuleSearch, EmitLogsTheEpisodeThroughTheLog) {
  // ir_count objective: the steps do not measure text_size, Emit does.
  auto h = Open("bits.c", Options(Objective::kIrCount));
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok());
  for (const char* name : {"sroa", "instcombine", "simplifycfg"}) {
    auto applied = search.Advance(*t, A(name), 1.0 / search.action_count());
    ASSERT_TRUE(applied.ok()) << applied.status();
    ASSERT_TRUE(*applied) << name;
  }
  EXPECT_EQ(t->state.text_size, 0);
  ASSERT_TRUE(search.Emit(*t, "unit-behaviour", 1234).ok());
  EXPECT_EQ(search.episodes(), 1);
  ASSERT_EQ(h->episodes.size(), 1u);
  const v1::Episode& e = h->episodes[0];
  EXPECT_EQ(e.episode_id(), t->episode_id);
  EXPECT_EQ(e.episode_id().rfind("unit-run-", 0), 0u);
  EXPECT_EQ(e.module_hash(), h->reply.start_hash());
  EXPECT_EQ(e.action_space_version(), "llvm-16/v1");
  EXPECT_EQ(e.objective(), "ir_count");
  EXPECT_EQ(e.behaviour_policy(), "unit-behaviour");
  EXPECT_EQ(e.seed(), 1234u);
  ASSERT_EQ(e.steps_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(e.steps(i).index(), i);
    EXPECT_EQ(e.steps(i).SerializeAsString(), t->steps[i].SerializeAsString());
  }
  EXPECT_EQ(e.final_ir_count(), t->state.ir_count);
  EXPECT_EQ(e.final_ir_count(), e.steps(2).ir_count_after());
  // The measured text size is the final state's.
  auto replay = h->root->Fork();
  ASSERT_TRUE(replay.ok());
  auto measured = (*replay)->Step(t->session->history(), {v1::TEXT_SIZE});
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_GT(e.final_text_size(), 0);
  EXPECT_EQ(e.final_text_size(), measured->observations(0).scalar());
  EXPECT_GT(e.unix_time_ms(), 0);
  EXPECT_GE(e.seconds(), 0);

  // The log's error is Emit's.
  h->log_status = absl::UnavailableError("sink is full");
  auto second = search.ForkTrajectory(*t);
  ASSERT_TRUE(second.ok());
  const absl::Status status = search.Emit(*second, "unit-behaviour", 1);
  EXPECT_EQ(status, absl::UnavailableError("sink is full"));
  EXPECT_EQ(h->episodes.size(), 2u);
}

TEST(ModuleSearch, EpisodeSeedIsDeterministic) {
  auto bits = Open("bits.c", Options());
  ASSERT_NE(bits, nullptr);
  // The same run seed and module in another worker process gives the same
  // seeds; another index, run seed or module gives others.
  auto again = Open("bits.c", Options());
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(bits->search->module_hash(), again->search->module_hash());
  ModuleSearchOptions reseeded = Options();
  reseeded.seed = 8;
  auto other_seed = bits->NewSearch(reseeded, bits->reference);
  auto sorting = Open("sorting.c", Options());
  ASSERT_NE(sorting, nullptr);
  ASSERT_NE(sorting->search->module_hash(), bits->search->module_hash());
  std::set<uint64_t> seen;
  for (int64_t i = 0; i < 8; ++i) {
    const uint64_t seed = bits->search->EpisodeSeed(i);
    EXPECT_EQ(seed, bits->search->EpisodeSeed(i));
    EXPECT_EQ(seed, again->search->EpisodeSeed(i));
    EXPECT_NE(seed, other_seed->EpisodeSeed(i));
    EXPECT_NE(seed, sorting->search->EpisodeSeed(i));
    seen.insert(seed);
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(ModuleSearch, FailedActionIsAFailedStepWithTheStateUnchanged) {
  auto h = Open("bits.c", Options(Objective::kIrCount, /*max_evaluations=*/5),
                {"--inject-crash-action=instcombine"});
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto t = search.StartTrajectory();
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(Apply(search, *t, "sroa"));
  const StateObservation before = t->state;

  auto crashed = search.Advance(*t, A("instcombine"), 0.5);
  ASSERT_TRUE(crashed.ok()) << crashed.status();
  EXPECT_FALSE(*crashed);
  ASSERT_EQ(t->steps.size(), 2u);
  const v1::Step& s = t->steps[1];
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(s.index(), 1);
  EXPECT_EQ(s.action(), A("instcombine"));
  EXPECT_EQ(s.action_probability(), 0.5);
  EXPECT_EQ(s.reward(), 0);
  EXPECT_EQ(s.ir_count_after(), before.ir_count);
  EXPECT_EQ(t->state.ir_count, before.ir_count);
  EXPECT_EQ(t->state.autophase, before.autophase);
  EXPECT_EQ(t->session->history(), std::vector<int>{A("sroa")});
  EXPECT_EQ(search.failed_steps(), 1);

  // A failed candidate has no session; `from` goes on.
  auto c = search.TryAction(*t, A("instcombine"), 1.0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->failed);
  EXPECT_TRUE(c->step.failed());
  EXPECT_EQ(c->session, nullptr);
  EXPECT_EQ(search.failed_steps(), 2);
  ASSERT_TRUE(Apply(search, *t, "simplifycfg"));
  EXPECT_LT(t->state.ir_count, before.ir_count);
  EXPECT_EQ(t->session->history(),
            (std::vector<int>{A("sroa"), A("simplifycfg")}));
  EXPECT_EQ(search.evaluations(), 4);
  EXPECT_FALSE(search.OutOfBudget());
  // Failed actions count against max_evaluations too.
  EXPECT_FALSE(Apply(search, *t, "instcombine"));
  EXPECT_EQ(search.evaluations(), 5);
  EXPECT_TRUE(search.OutOfBudget());
  EXPECT_FALSE(search.time_limited());
}

}  // namespace
}  // namespace phaseloop::search
