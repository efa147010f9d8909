#include "staging_harness/search/strategies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/workers/worker_client.h"

namespace phaseloop::search {
namespace {

// Budgets here are counted in evaluations (max_evaluations), never by the
// clock, so every search stops at the same point on any machine.
constexpr char kWorker[] = "staging_harness/workers/session_worker";

int A(const char* name) { return *passes::ActionSpace::Llvm16().Find(name); }

// The fixture program `name` (e.g. "bits.c") among the test's data.
std::string Fixture(const std::string& name) {
  return testing::FixturePath(name);
}

// One module's root session on a real session worker and a ModuleSearch over
// it, set up the way search_pool.cc does, logging into `episodes`. Not
// movable: the log points here.
struct Harness {
  std::unique_ptr<service::WorkerProcess> worker;
  std::unique_ptr<service::RemoteSession> root;
  v1::StartSessionReply reply;
  StateObservation start;
  std::vector<v1::Episode> episodes;
  std::unique_ptr<ModuleSearch> search;
};

struct SearchSetup {
  std::string fixture = "bits.c";
  int64_t max_evaluations = 0;
  uint64_t seed = 7;
  bool observe_hash = false;
  std::vector<std::string> worker_args;
};

std::unique_ptr<Harness> Open(const SearchSetup& setup) {
  auto h = std::make_unique<Harness>();
  service::WorkerOptions worker_options;
  worker_options.worker_binary = kWorker;
  worker_options.worker_args = setup.worker_args;
  auto worker = service::WorkerProcess::Start(worker_options);
  EXPECT_TRUE(worker.ok()) << worker.status();
  if (!worker.ok()) return nullptr;
  h->worker = std::move(*worker);
  v1::ModuleSource source;
  source.set_path(Fixture(setup.fixture));
  auto root =
      service::RemoteSession::Start(*h->worker, source,
                                    {v1::IR_COUNT, v1::TEXT_SIZE, v1::AUTOPHASE,
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
  const ModuleReference reference = {h->start.ir_count, h->start.text_size,
                                     oz->at(0).ir_count, oz->at(0).text_size};
  ModuleSearchOptions options;
  options.objective = Objective::kIrCount;
  options.budget_seconds = 3600;  // never reached: max_evaluations ends them
  options.max_evaluations = setup.max_evaluations;
  options.seed = setup.seed;
  options.run_id = "strategies-test";
  options.observe_hash = setup.observe_hash;
  Harness* raw = h.get();
  h->search =
      std::make_unique<ModuleSearch>(*h->root, h->start, h->reply, reference,
                                     options, [raw](const v1::Episode& e) {
                                       raw->episodes.push_back(e);
                                       return absl::OkStatus();
                                     });
  return h;
}

std::vector<int> Actions(const v1::Episode& e) {
  std::vector<int> out;
  for (const v1::Step& s : e.steps()) out.push_back(s.action());
  return out;
}

std::vector<int> AppliedActions(const v1::Episode& e) {
  std::vector<int> out;
  for (const v1::Step& s : e.steps()) {
    if (!s.failed()) out.push_back(s.action());
  }
  return out;
}

// The search ended on max_evaluations, not on the clock.
void ExpectSpentExactly(const ModuleSearch& search, int64_t max_evaluations) {
  EXPECT_EQ(search.evaluations(), max_evaluations);
  EXPECT_TRUE(search.OutOfBudget());
  EXPECT_FALSE(search.time_limited());
}

TEST(StrategyNames, ParseRoundTripsAndRejectsUnknownNames) {
  const std::vector<Strategy> all = {Strategy::kRandom, Strategy::kGreedy,
                                     Strategy::kBeam, Strategy::kGuided};
  std::set<std::string> names;
  for (Strategy s : all) {
    const std::string name = StrategyName(s);
    names.insert(name);
    ASSERT_TRUE(ParseStrategy(name).has_value()) << name;
    EXPECT_EQ(*ParseStrategy(name), s) << name;
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"random", "greedy", "beam", "guided"}));
  for (const char* bad : {"", "Random", "BEAM", "greedy ", " guided", "rand",
                          "beam-search", "?"}) {
    EXPECT_FALSE(ParseStrategy(bad).has_value()) << "'" << bad << "'";
  }
}

// A random search with max_evaluations, in its own worker.
struct RandomRun {
  std::vector<v1::Episode> episodes;
  std::vector<uint64_t> episode_seeds;  // ModuleSearch::EpisodeSeed(0..)
  std::vector<int> best_actions;
  int64_t best_value = 0;
  int64_t failed_steps = 0;
  int64_t start_ir_count = 0;
};

RandomRun Random(uint64_t seed, int64_t max_evaluations, int episode_length,
                 std::vector<std::string> worker_args = {}) {
  RandomRun run;
  SearchSetup setup;
  setup.seed = seed;
  setup.max_evaluations = max_evaluations;
  setup.worker_args = std::move(worker_args);
  auto h = Open(setup);
  EXPECT_NE(h, nullptr);
  if (h == nullptr) return run;
  const absl::Status status =
      RandomSearch(*h->search, nullptr, episode_length, "random");
  EXPECT_TRUE(status.ok()) << status;
  ExpectSpentExactly(*h->search, max_evaluations);
  run.episodes = h->episodes;
  for (size_t i = 0; i < run.episodes.size(); ++i) {
    run.episode_seeds.push_back(
        h->search->EpisodeSeed(static_cast<int64_t>(i)));
  }
  run.best_actions = h->search->best_actions();
  run.best_value = h->search->best_value();
  run.failed_steps = h->search->failed_steps();
  run.start_ir_count = h->start.ir_count;
  EXPECT_LE(run.best_value, h->search->Value(h->start));
  return run;
}

TEST(RandomSearch, FixedSeedAndMaxEvaluationsGiveTheSameEpisodes) {
  const RandomRun first =
      Random(/*seed=*/7, /*max_evaluations=*/30, /*length=*/8);
  const RandomRun second =
      Random(/*seed=*/7, /*max_evaluations=*/30, /*length=*/8);
  // 30 evaluations in episodes of 8: 8, 8, 8, 6.
  ASSERT_EQ(first.episodes.size(), 4u);
  ASSERT_EQ(second.episodes.size(), first.episodes.size());
  const double propensity = 1.0 / passes::ActionSpace::Llvm16().size();
  for (size_t i = 0; i < first.episodes.size(); ++i) {
    const v1::Episode& a = first.episodes[i];
    const v1::Episode& b = second.episodes[i];
    EXPECT_EQ(a.steps_size(), i < 3 ? 8 : 6) << i;
    EXPECT_EQ(Actions(a), Actions(b)) << "episode " << i;
    EXPECT_EQ(a.seed(), b.seed());
    EXPECT_EQ(a.seed(), first.episode_seeds[i]);
    EXPECT_EQ(a.episode_id(), b.episode_id());
    EXPECT_EQ(a.episode_id().rfind("strategies-test-", 0), 0u)
        << a.episode_id();
    EXPECT_EQ(a.behaviour_policy(), "random");
    EXPECT_EQ(a.final_ir_count(), b.final_ir_count());
    for (int s = 0; s < a.steps_size(); ++s) {
      EXPECT_DOUBLE_EQ(a.steps(s).action_probability(), propensity);
      EXPECT_EQ(a.steps(s).ir_count_after(), b.steps(s).ir_count_after());
      EXPECT_DOUBLE_EQ(a.steps(s).reward(), b.steps(s).reward());
    }
  }
  EXPECT_EQ(first.best_actions, second.best_actions);
  EXPECT_EQ(first.best_value, second.best_value);

  // Another run seed draws other episodes.
  const RandomRun reseeded =
      Random(/*seed=*/8, /*max_evaluations=*/30, /*length=*/8);
  ASSERT_EQ(reseeded.episodes.size(), 4u);
  EXPECT_NE(Actions(reseeded.episodes[0]), Actions(first.episodes[0]));
}

TEST(RandomSearch, EpisodesFromATrajectoryExtendIt) {
  SearchSetup setup;
  setup.max_evaluations = 2 + 9;
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto from = search.StartTrajectory();
  ASSERT_TRUE(from.ok());
  for (const char* name : {"sroa", "instcombine"}) {
    auto applied = search.Advance(*from, A(name), 1.0);
    ASSERT_TRUE(applied.ok() && *applied) << name;
  }
  ASSERT_TRUE(
      RandomSearch(search, &*from, /*episode_length=*/4, "random").ok());
  ExpectSpentExactly(search, 11);
  // 9 evaluations left in episodes of 4: 4, 4, 1 random steps after the prefix.
  ASSERT_EQ(h->episodes.size(), 3u);
  const std::vector<int> sizes = {6, 6, 3};
  for (size_t i = 0; i < h->episodes.size(); ++i) {
    const v1::Episode& e = h->episodes[i];
    ASSERT_EQ(e.steps_size(), sizes[i]);
    EXPECT_EQ(e.steps(0).action(), A("sroa"));
    EXPECT_EQ(e.steps(1).action(), A("instcombine"));
    EXPECT_EQ(e.steps(0).action_probability(), 1.0);
    for (int s = 2; s < e.steps_size(); ++s) {
      EXPECT_DOUBLE_EQ(e.steps(s).action_probability(),
                       1.0 / search.action_count());
    }
  }
  EXPECT_EQ(from->steps.size(), 2u);  // `from` itself is unchanged
}

TEST(RandomSearch, FailedActionIsAFailedStepAndTheSearchGoesOn) {
  // The first action the seeded search draws is made to crash the worker: the
  // same actions are drawn, that one's steps fail, the search spends its
  // budget.
  const RandomRun clean =
      Random(/*seed=*/7, /*max_evaluations=*/12, /*length=*/6);
  ASSERT_EQ(clean.episodes.size(), 2u);
  const int crash = clean.episodes[0].steps(0).action();
  const std::string name = passes::ActionSpace::Llvm16().at(crash).name;
  const RandomRun faulty =
      Random(/*seed=*/7, /*max_evaluations=*/12, /*length=*/6,
             {"--inject-crash-action=" + name});
  ASSERT_EQ(faulty.episodes.size(), 2u);
  int64_t failed = 0;
  for (size_t i = 0; i < faulty.episodes.size(); ++i) {
    const v1::Episode& e = faulty.episodes[i];
    EXPECT_EQ(Actions(e), Actions(clean.episodes[i])) << "episode " << i;
    for (int s = 0; s < e.steps_size(); ++s) {
      const v1::Step& step = e.steps(s);
      EXPECT_EQ(step.failed(), step.action() == crash) << name << " step " << s;
      if (step.failed()) {
        ++failed;
        EXPECT_EQ(step.reward(), 0);
        const int64_t before =
            s == 0 ? faulty.start_ir_count : e.steps(s - 1).ir_count_after();
        EXPECT_EQ(step.ir_count_after(), before);
      }
    }
  }
  EXPECT_GE(failed, 1);
  EXPECT_EQ(faulty.failed_steps, failed);
  for (int a : faulty.best_actions) EXPECT_NE(a, crash);
}

// Applies `actions` to a fork of the root; the module hash reached.
std::string HashAfter(Harness& h, const std::vector<int>& actions) {
  auto fork = h.root->Fork();
  EXPECT_TRUE(fork.ok()) << fork.status();
  if (!fork.ok()) return "";
  if (actions.empty()) {
    auto observed = (*fork)->Observe({v1::MODULE_HASH});
    EXPECT_TRUE(observed.ok()) << observed.status();
    return observed.ok() ? observed->observations(0).text() : "";
  }
  auto reply = (*fork)->Step(actions, {v1::MODULE_HASH});
  EXPECT_TRUE(reply.ok()) << reply.status();
  return reply.ok() ? reply->observations(0).text() : "";
}

// Every kept step of every beam episode lowers the objective below its
// parent's; the result is the best leaf and no worse than the start.
void CheckBeam(const Harness& h, const Trajectory& result,
               const char* behaviour) {
  const ModuleSearch& search = *h.search;
  const int64_t start = search.Value(h.start);
  ASSERT_FALSE(h.episodes.empty());
  int64_t best_final = start;
  for (const v1::Episode& e : h.episodes) {
    EXPECT_EQ(e.behaviour_policy(), behaviour);
    EXPECT_EQ(e.seed(), search.options().seed);
    int64_t previous = start;
    for (const v1::Step& s : e.steps()) {
      EXPECT_EQ(s.action_probability(), 1.0);
      if (s.failed()) continue;
      EXPECT_LT(s.ir_count_after(), previous)
          << e.episode_id() << " step " << s.index() << " kept "
          << s.action_name() << " which does not lower ir_count";
      EXPECT_GT(s.reward(), 0);
      previous = s.ir_count_after();
    }
    EXPECT_EQ(e.final_ir_count(), previous);
    best_final = std::min(best_final, e.final_ir_count());
  }
  EXPECT_EQ(search.Value(result.state), best_final);
  EXPECT_LE(search.Value(result.state), start);
  EXPECT_EQ(search.best_value(), best_final);
  EXPECT_EQ(result.session->history(), search.best_actions());
}

TEST(BeamSearch, GreedyTakesTheBestChildUntilALocalOptimum) {
  SearchSetup setup;
  setup.max_evaluations = 20000;  // far more than bits.c needs
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  auto start = search.StartTrajectory();
  ASSERT_TRUE(start.ok());
  auto result = BeamSearch(search, std::move(*start), /*width=*/1, "greedy");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(search.OutOfBudget())
      << "stopped by the budget, not at an optimum";
  CheckBeam(*h, *result, "greedy");
  ASSERT_EQ(h->episodes.size(), 1u);  // one path
  const v1::Episode& path = h->episodes[0];
  ASSERT_GE(path.steps_size(), 1);
  EXPECT_EQ(path.episode_id(), result->episode_id);
  // Whole levels of expansions: |A| per kept step, and |A| more at the end.
  EXPECT_EQ(search.evaluations(), static_cast<int64_t>(search.action_count()) *
                                      (path.steps_size() + 1));

  // The first step is the best single action from the start (ties: the lower
  // index), measured here on the root's forks.
  int best_action = -1;
  int64_t best_value = search.Value(h->start);
  for (int a = 0; a < search.action_count(); ++a) {
    auto fork = h->root->Fork();
    ASSERT_TRUE(fork.ok());
    auto reply = (*fork)->Step({a}, {v1::IR_COUNT});
    if (!reply.ok()) continue;
    if (reply->observations(0).scalar() < best_value) {
      best_value = reply->observations(0).scalar();
      best_action = a;
    }
  }
  ASSERT_GE(best_action, 0);
  EXPECT_EQ(path.steps(0).action(), best_action);
  EXPECT_EQ(path.steps(0).ir_count_after(), best_value);

  // A local optimum: no action lowers the result.
  for (int a = 0; a < search.action_count(); ++a) {
    auto fork = result->session->Fork();
    ASSERT_TRUE(fork.ok());
    auto reply = (*fork)->Step({a}, {v1::IR_COUNT});
    if (!reply.ok()) continue;
    EXPECT_GE(reply->observations(0).scalar(), search.Value(result->state))
        << passes::ActionSpace::Llvm16().at(a).name << " still lowers it";
  }
}

TEST(BeamSearch, GreedyStoppedByTheBudgetKeepsOnlyImprovements) {
  SearchSetup setup;
  setup.max_evaluations = 200;  // one level of 122 and part of the next
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  auto start = h->search->StartTrajectory();
  ASSERT_TRUE(start.ok());
  auto result =
      BeamSearch(*h->search, std::move(*start), /*width=*/1, "greedy");
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSpentExactly(*h->search, 200);
  CheckBeam(*h, *result, "greedy");
  ASSERT_EQ(h->episodes.size(), 1u);
  EXPECT_EQ(h->episodes[0].steps_size(), 2);  // the best child of each level
}

TEST(BeamSearch, WideBeamKeepsDistinctImprovingStates) {
  SearchSetup setup;
  setup.observe_hash = true;
  setup.max_evaluations = 122 * 7;  // a few levels of width 3
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->search->action_count(), 122);
  auto start = h->search->StartTrajectory();
  ASSERT_TRUE(start.ok());
  ASSERT_FALSE(start->state.hash.empty());
  auto result = BeamSearch(*h->search, std::move(*start), /*width=*/3, "beam");
  ASSERT_TRUE(result.ok()) << result.status();
  CheckBeam(*h, *result, "beam");
  EXPECT_FALSE(h->search->time_limited());
  EXPECT_GE(h->episodes.size(), 2u);

  // The kept tree's states (every prefix of every episode's applied actions)
  // are different modules, none of them the start.
  std::map<std::vector<int>, std::string> states;
  std::set<std::vector<int>> leaves;
  for (const v1::Episode& e : h->episodes) {
    const std::vector<int> applied = AppliedActions(e);
    EXPECT_TRUE(leaves.insert(applied).second)
        << "two episodes end at one node";
    for (size_t n = 1; n <= applied.size(); ++n) {
      states.emplace(std::vector<int>(applied.begin(), applied.begin() + n),
                     "");
    }
  }
  std::map<std::string, std::vector<int>> by_hash;
  by_hash[HashAfter(*h, {})] = {};
  for (auto& [prefix, hash] : states) {
    hash = HashAfter(*h, prefix);
    auto [it, inserted] = by_hash.emplace(hash, prefix);
    EXPECT_TRUE(inserted) << "a state was kept twice (or is the start)";
  }
  // No level keeps more than the width.
  std::map<size_t, int> per_level;
  for (const auto& [prefix, hash] : states) ++per_level[prefix.size()];
  for (const auto& [level, count] : per_level) EXPECT_LE(count, 3) << level;
}

TEST(BeamSearch, FailedExpansionIsAFailedStepAndTheSearchGoesOn) {
  SearchSetup setup;
  setup.max_evaluations = 122;  // the first level
  setup.worker_args = {"--inject-crash-action=instcombine"};
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  auto start = h->search->StartTrajectory();
  ASSERT_TRUE(start.ok());
  auto result =
      BeamSearch(*h->search, std::move(*start), /*width=*/1, "greedy");
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSpentExactly(*h->search, 122);
  CheckBeam(*h, *result, "greedy");
  EXPECT_EQ(h->search->failed_steps(), 1);
  // The failure at the start state, then the best child.
  ASSERT_EQ(h->episodes.size(), 1u);
  const v1::Episode& e = h->episodes[0];
  ASSERT_EQ(e.steps_size(), 2);
  EXPECT_TRUE(e.steps(0).failed());
  EXPECT_EQ(e.steps(0).action(), A("instcombine"));
  EXPECT_EQ(e.steps(0).ir_count_after(), h->start.ir_count);
  EXPECT_FALSE(e.steps(1).failed());
  EXPECT_LT(e.steps(1).ir_count_after(), h->start.ir_count);
}

KnownBest Known(const std::string& module,
                const std::vector<const char*>& actions,
                std::vector<int64_t> autophase) {
  KnownBest k;
  k.best.set_module_hash(module);
  k.best.set_objective("ir_count");
  k.best.set_action_space_version("llvm-16/v1");
  for (const char* a : actions) k.best.add_actions(A(a));
  k.autophase = std::move(autophase);
  return k;
}

TEST(GuidedSearch, ReplaysTheNeighboursFirstThenRefines) {
  // The replays (7 actions), the greedy refinement (a few levels of |A| on
  // bits.c) and a few random episodes.
  constexpr int64_t kBudget = 7 + 122 * 8 + 13;
  SearchSetup setup;
  setup.max_evaluations = kBudget;
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  ModuleSearch& search = *h->search;
  const KnownBest first =
      Known("first", {"sroa", "instcombine", "simplifycfg"}, {});
  const KnownBest second =
      Known("second", {"mem2reg", "gvn", "dse", "adce"}, {});
  ASSERT_TRUE(
      GuidedSearch(search, {&first, &second}, /*episode_length=*/5).ok());
  ExpectSpentExactly(search, kBudget);
  ASSERT_GE(h->episodes.size(), 3u);
  for (const v1::Episode& e : h->episodes)
    EXPECT_EQ(e.behaviour_policy(), "guided");

  // The neighbours' sequences first, in order, one evaluated step per action,
  // propensity 1.
  const v1::Episode& r0 = h->episodes[0];
  const v1::Episode& r1 = h->episodes[1];
  EXPECT_EQ(Actions(r0),
            (std::vector<int>{A("sroa"), A("instcombine"), A("simplifycfg")}));
  EXPECT_EQ(Actions(r1),
            (std::vector<int>{A("mem2reg"), A("gvn"), A("dse"), A("adce")}));
  for (const v1::Episode* e : {&r0, &r1}) {
    EXPECT_EQ(e->seed(), search.options().seed);
    for (const v1::Step& s : e->steps()) {
      EXPECT_EQ(s.action_probability(), 1.0);
      EXPECT_FALSE(s.failed());
    }
  }
  // Refinement starts from the best state a replay reached (its first
  // occurrence): the greedy path has that prefix, then only improving steps.
  int64_t best = search.Value(h->start);
  std::vector<v1::Step> prefix;
  for (const v1::Episode* e : {&r0, &r1}) {
    for (int i = 0; i < e->steps_size(); ++i) {
      if (e->steps(i).ir_count_after() < best) {
        best = e->steps(i).ir_count_after();
        prefix.assign(e->steps().begin(), e->steps().begin() + i + 1);
      }
    }
  }
  ASSERT_FALSE(prefix.empty());
  const v1::Episode& greedy = h->episodes[2];
  ASSERT_GE(greedy.steps_size(), static_cast<int>(prefix.size()));
  for (size_t i = 0; i < prefix.size(); ++i) {
    EXPECT_EQ(greedy.steps(i).action(), prefix[i].action()) << i;
  }
  int64_t previous = best;
  for (int i = static_cast<int>(prefix.size()); i < greedy.steps_size(); ++i) {
    EXPECT_EQ(greedy.steps(i).action_probability(), 1.0);
    EXPECT_FALSE(greedy.steps(i).failed());
    EXPECT_LT(greedy.steps(i).ir_count_after(), previous);
    previous = greedy.steps(i).ir_count_after();
  }
  // Greedy ran to its optimum (a level of |A| per kept step and one more);
  // random episodes of 5 spent the rest.
  const int64_t kept =
      greedy.steps_size() - static_cast<int64_t>(prefix.size());
  const int64_t left = kBudget - 7 - 122 * (kept + 1);
  ASSERT_GT(left, 0) << "greedy needs more levels on bits.c now: raise kBudget";
  EXPECT_EQ(static_cast<int64_t>(h->episodes.size()) - 3, (left + 4) / 5);
  // Then random episodes from the refined state: its path, then 1/|A| steps.
  for (size_t r = 3; r < h->episodes.size(); ++r) {
    const v1::Episode& e = h->episodes[r];
    ASSERT_GT(e.steps_size(), greedy.steps_size());
    EXPECT_LE(e.steps_size(), greedy.steps_size() + 5);
    for (int i = 0; i < e.steps_size(); ++i) {
      if (i < greedy.steps_size()) {
        EXPECT_EQ(e.steps(i).action(), greedy.steps(i).action());
        EXPECT_EQ(e.steps(i).action_probability(), 1.0);
      } else {
        EXPECT_DOUBLE_EQ(e.steps(i).action_probability(),
                         1.0 / search.action_count());
      }
    }
  }
  EXPECT_LE(search.best_value(), greedy.final_ir_count());
  EXPECT_LE(search.best_value(), best);
}

TEST(GuidedSearch, RunStrategyReplaysTheNearestNeighbourFirst) {
  SearchSetup setup;
  setup.max_evaluations = 3;  // the first replay only
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  const std::vector<KnownBest> known = {
      Known("far", {"loop-unroll", "licm", "gvn"}, std::vector<int64_t>(56, 1)),
      Known("near", {"sroa", "early-cse", "simplifycfg"}, h->start.autophase)};
  StrategyOptions options;
  options.strategy = Strategy::kGuided;
  options.neighbours = 2;
  ASSERT_TRUE(RunStrategy(*h->search, options, known).ok());
  ExpectSpentExactly(*h->search, 3);
  ASSERT_EQ(h->episodes.size(), 1u);
  EXPECT_EQ(Actions(h->episodes[0]),
            (std::vector<int>{A("sroa"), A("early-cse"), A("simplifycfg")}));
  for (const v1::Step& s : h->episodes[0].steps()) {
    EXPECT_EQ(s.action_probability(), 1.0);
  }
}

TEST(GuidedSearch, FailedReplayedActionIsAFailedStepAndTheReplayGoesOn) {
  SearchSetup setup;
  setup.max_evaluations = 4;
  setup.worker_args = {"--inject-crash-action=instcombine"};
  auto h = Open(setup);
  ASSERT_NE(h, nullptr);
  const KnownBest known =
      Known("k", {"sroa", "instcombine", "simplifycfg", "gvn"}, {});
  ASSERT_TRUE(GuidedSearch(*h->search, {&known}, /*episode_length=*/5).ok());
  ExpectSpentExactly(*h->search, 4);
  EXPECT_EQ(h->search->failed_steps(), 1);
  ASSERT_EQ(h->episodes.size(), 1u);
  const v1::Episode& e = h->episodes[0];
  ASSERT_EQ(e.steps_size(), 4);
  EXPECT_TRUE(e.steps(1).failed());
  EXPECT_EQ(e.steps(1).reward(), 0);
  EXPECT_EQ(e.steps(1).ir_count_after(), e.steps(0).ir_count_after());
  EXPECT_EQ(AppliedActions(e),
            (std::vector<int>{A("sroa"), A("simplifycfg"), A("gvn")}));
  EXPECT_LT(e.final_ir_count(), e.steps(0).ir_count_after());
  EXPECT_EQ(h->search->best_actions(),
            (std::vector<int>{A("sroa"), A("simplifycfg"), A("gvn")}));
}

}  // namespace
}  // namespace phaseloop::search
