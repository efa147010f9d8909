// The rollout state machine against a scripted environment: a clock that
// advances only when the controller sleeps, and reward windows drawn from a
// latency model (baseline ~10 ms, canary = baseline x factor, with
// deterministic jitter). The real environment (services, load, Kafka, the
// reward engine) is exercised by tests/canary_run_test.
#include "canary/controller/canary_controller.h"

#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

class ScriptedEnvironment : public RolloutEnvironment {
 public:
  int64_t now = 1'000'000'000;
  double canary_factor = 1.0;  // canary latency / baseline latency
  static constexpr int kRequestsPerWindow = 40;
  // The canary's requests whose wave is above canary_tail_above (0.95: the
  // slowest tenth) are this many times slower: its p95 rises, its median
  // does not.
  double canary_tail_factor = 1.0;
  double canary_tail_above = 0.95;
  int64_t window_ms = 1000;
  bool outputs_differ = false;
  RolloutAllowance allowance;
  // What the Nth read of the budget says instead (1: Build's, then one
  // before each step, then Finish's).
  std::map<int, RolloutAllowance> allowance_at_call;
  int allowance_calls = 0;
  bool rewards_unreachable = false;
  bool evidence_only_three_windows = false;
  // Collections that find no window yet (-1: every one).
  int collections_without_windows = 0;
  // Requests a stop once this many steps have been collected.
  int stop_after_collections = -1;
  // Collections whose newest closed window ends one window before the step
  // (the reward engine has not closed the last one yet).
  int collections_one_window_behind = 0;
  // From this collection on, `ended_group`'s process has ended.
  int ended_from_collection = 0;
  std::string ended_group = "canary";

  int collections = 0;
  int starts = 0;
  std::vector<std::vector<int>> stopped_pids;
  std::vector<double> weights;
  std::vector<std::string> actions;

  int64_t NowMs() override { return now; }
  void SleepUntilMs(int64_t ms) override { now = std::max(now, ms); }
  bool StopRequested() override {
    return stop_after_collections >= 0 && collections >= stop_after_collections;
  }
  absl::StatusOr<VariantBuilds> BuildAndCheck(const v1::CanaryRun&) override {
    actions.push_back("build");
    if (outputs_differ) {
      return absl::FailedPreconditionError("deflate 4096 B: byte 17 differs");
    }
    return VariantBuilds{"build-stable", "build-candidate"};
  }
  absl::StatusOr<RolloutAllowance> Allowance(const v1::CanaryRun&) override {
    auto it = allowance_at_call.find(++allowance_calls);
    return it != allowance_at_call.end() ? it->second : allowance;
  }
  absl::Status StartInstances(v1::CanaryRun* run) override {
    ++starts;
    for (const char* group : {"stable", "baseline", "canary"}) {
      auto* instance = run->add_instances();
      instance->set_group(group);
      instance->set_pid(100 * starts + static_cast<int>(run->instances_size()));
    }
    actions.push_back("start");
    return absl::OkStatus();
  }
  absl::Status StopInstances(const v1::CanaryRun& run) override {
    std::vector<int> pids;
    for (const auto& instance : run.instances()) pids.push_back(instance.pid());
    stopped_pids.push_back(pids);
    return absl::OkStatus();
  }
  absl::Status SetCanaryWeight(double weight) override {
    weights.push_back(weight);
    return absl::OkStatus();
  }
  absl::StatusOr<StepEvidence> CollectStep(const v1::CanaryRun&,
                                           int64_t from_ms,
                                           int64_t to_ms) override {
    ++collections;
    if (rewards_unreachable) {
      return absl::UnavailableError("cannot reach the Kafka cluster");
    }
    StepEvidence evidence;
    if (collections_without_windows < 0 ||
        collections <= collections_without_windows) {
      evidence.metrics["latency_ms"];
      evidence.metrics["latency_median_ms"];
      evidence.metrics["error_rate"];
      return evidence;  // a reward engine that has closed nothing yet
    }
    Samples& latency = evidence.metrics["latency_ms"];
    Samples& errors = evidence.metrics["error_rate"];
    int k = 0;
    for (int64_t start = from_ms; start + window_ms <= to_ms;
         start += window_ms, ++k) {
      if (evidence_only_three_windows && k >= 3) break;
      // 40 requests per window and side; the canary's are the baseline's
      // times canary_factor.
      for (int i = 0; i < kRequestsPerWindow; ++i) {
        const double wave = std::sin(0.7 * k + 1.3 * i);
        const double ms = 10 * (1 + 0.2 * wave);
        latency.baseline.push_back(ms);
        latency.canary.push_back(
            ms * canary_factor *
            (wave > canary_tail_above ? canary_tail_factor : 1.0));
      }
      evidence.baseline_window_p95_ms.push_back(12);
      evidence.canary_window_p95_ms.push_back(12 * canary_factor);
      errors.baseline.push_back(0);
      errors.canary.push_back(0);
      ++evidence.baseline_windows;
      ++evidence.canary_windows;
    }
    evidence.metrics["latency_median_ms"] = latency;
    const int64_t newest = collections <= collections_one_window_behind
                               ? to_ms - window_ms
                               : to_ms;
    evidence.baseline_newest_end_ms = newest;
    evidence.canary_newest_end_ms = newest;
    evidence.relative_reward = -std::log(canary_factor);
    return evidence;
  }
  std::vector<std::string> EndedInstances(const v1::CanaryRun&) override {
    if (ended_from_collection > 0 && collections >= ended_from_collection) {
      return {ended_group};
    }
    return {};
  }
  int64_t WindowSettleMs() override { return 3000; }
  int64_t RewardWindowMs() override { return window_ms; }
  absl::Status Promote(const v1::CanaryRun&) override {
    actions.push_back("promote");
    return absl::OkStatus();
  }
  absl::Status MarkFailed(const v1::CanaryRun&,
                          const std::string& reason) override {
    actions.push_back("mark_failed");
    failed_reason = reason;
    return absl::OkStatus();
  }
  absl::Status RecordOutcome(const v1::CanaryRun& run) override {
    actions.push_back(absl::StrCat("record:", run.has_final_reward()));
    return absl::OkStatus();
  }
  void Progress(const std::string&) override {}

  std::string failed_reason;
};

RolloutConfig ThreeSteps() {
  RolloutConfig config;
  config.judge = DefaultRolloutJudge();
  config.warmup_s = 2;
  config.extension_s = 5;
  config.max_extension_s = 10;
  const double weights[] = {0.05, 0.25, 0.5};
  for (int i = 0; i < 3; ++i) {
    v1::CanaryStepPlan step;
    step.set_index(i);
    step.set_canary_weight(weights[i]);
    step.set_duration_ms(20000);
    step.set_warmup_ms(2000);
    step.set_max_duration_ms(30000);
    config.steps.push_back(step);
  }
  return config;
}

CanaryRequest Request(const std::string& id = "c1") {
  return CanaryRequest{id, "demo", "cand", "stab"};
}

struct Fixture {
  std::string dir = testing::MakeTempDir();
  ScriptedEnvironment env;
  absl::StatusOr<v1::CanaryRun> Run(const CanaryRequest& request = Request(),
                                    RolloutConfig config = ThreeSteps()) {
    CanaryController controller(CanaryStateStore(dir), std::move(config), &env);
    return controller.Run(request);
  }
};

int Count(const std::vector<std::string>& actions, const std::string& what) {
  return static_cast<int>(std::count(actions.begin(), actions.end(), what));
}

TEST(CanaryControllerTest, AnEqualCanaryIsPromotedAfterEveryStep) {
  Fixture f;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  ASSERT_EQ(run->steps_size(), 3);
  for (const auto& step : run->steps()) EXPECT_EQ(step.outcome(), "Pass");
  EXPECT_EQ(Count(f.env.actions, "promote"), 1);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
  EXPECT_EQ(Count(f.env.actions, "record:1"), 1);
  EXPECT_TRUE(run->has_final_reward());
  EXPECT_GT(run->final_reward(), 0);
  EXPECT_TRUE(run->instances().empty());
  EXPECT_EQ(f.env.weights, (std::vector<double>{0.05, 0.25, 0.5, 0}));
  // The saved state is the returned one.
  auto saved = CanaryStateStore(f.dir).Load("c1");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->phase(), "promoted");
  EXPECT_EQ(saved->steps_size(), 3);
}

// A rollout named in bytes that are not UTF-8 is refused before its state
// is first saved (its JSON would keep the name altered) and before any
// instance starts.
TEST(CanaryControllerTest, ANameThatIsNotUtf8IsRefusedBeforeAnything) {
  Fixture f;
  CanaryRequest request = Request();
  request.service = "caf\xe9";
  auto run = f.Run(request);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("service is not UTF-8"),
            std::string::npos)
      << run.status();
  EXPECT_TRUE(f.env.actions.empty());
  EXPECT_FALSE(CanaryStateStore(f.dir).Load("c1").ok());
}

// A p95 rise the rank test cannot prove extends the step to its maximum;
// there it passes (unproven_at_max: pass) or rolls back (rollback).
// The slowest 6 % of the canary's requests 10 % slower: its p95 is 1.1x
// the baseline's, and neither the rank test nor the tail test proves it at
// 99 % over a step's 1200 requests (p = 0.04 at the maximum).
TEST(CanaryControllerTest, AnUnprovenRiseAtTheStepsMaximum) {
  Fixture f;
  f.env.canary_tail_factor = 1.1;
  f.env.canary_tail_above = 0.98;
  auto passed = f.Run(Request("tail-pass"));
  ASSERT_TRUE(passed.ok()) << passed.status();
  EXPECT_EQ(passed->phase(), "promoted");
  ASSERT_EQ(passed->steps_size(), 3);
  const auto& first = passed->steps(0);
  EXPECT_EQ(first.outcome(), "Pass");
  EXPECT_EQ(first.extensions(), 2);  // 20 s + 2 x 5 s = its 30 s maximum
  bool said_why = false;
  for (const auto& metric : first.metrics()) {
    if (metric.name() != "latency_ms") continue;
    EXPECT_GT(metric.ratio(), 1.05);
    EXPECT_GT(metric.p_value(), 0.05);
    said_why =
        metric.reason().find("unproven_change: pass") != std::string::npos;
  }
  EXPECT_TRUE(said_why);

  RolloutConfig strict = ThreeSteps();
  strict.pass_unproven_at_max = false;
  auto refused = f.Run(Request("tail-rollback"), strict);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->phase(), "rolled_back");
  ASSERT_EQ(refused->steps_size(), 1);
  EXPECT_EQ(refused->steps(0).outcome(), "Inconclusive");
}

// The canary's slowest tenth 1.5x slower, its median unchanged: the rank
// test alone could not prove it (it passed at the step's maximum); the
// p95's tail test does, at the first look.
TEST(CanaryControllerTest, ASlowerTailIsRolledBackAtTheFirstStep) {
  Fixture f;
  f.env.canary_tail_factor = 1.5;
  auto run = f.Run(Request("tail-fail"));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "rolled_back");
  ASSERT_EQ(run->steps_size(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Fail");
  EXPECT_EQ(run->steps(0).extensions(), 0);
  // The run's record says which test gave each metric's p-value.
  bool tail_tested = false;
  for (const auto& metric : run->steps(0).metrics()) {
    EXPECT_FALSE(metric.test().empty()) << metric.name();
    tail_tested |= metric.test() == "mann_whitney+exceedance_p95";
  }
  EXPECT_TRUE(tail_tested);
}

TEST(CanaryControllerTest, ASlowCanaryIsRolledBackAtTheFirstStep) {
  Fixture f;
  f.env.canary_factor = 1.3;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "rolled_back");
  ASSERT_EQ(run->steps_size(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Fail");
  EXPECT_EQ(Count(f.env.actions, "promote"), 0);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 1);
  EXPECT_NE(f.env.failed_reason.find("step 1"), std::string::npos);
  EXPECT_TRUE(run->has_final_reward());
  EXPECT_LT(run->final_reward(), -0.1);  // -log(1.3) - penalty
  EXPECT_EQ(f.env.weights.back(), 0);
}

TEST(CanaryControllerTest, DifferentOutputsNeverReachTraffic) {
  Fixture f;
  f.env.outputs_differ = true;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "rolled_back");
  EXPECT_EQ(f.env.starts, 0);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 1);
  EXPECT_FALSE(run->has_final_reward());
  EXPECT_NE(run->final_reasons(0).find("byte 17"), std::string::npos);
}

TEST(CanaryControllerTest, NoBudgetMeansNoExploration) {
  Fixture f;
  f.env.allowance.allowed = false;
  f.env.allowance.tier = "exhausted";
  f.env.allowance.reasons = {"budget 0.0 % left", "exhausted → frozen"};
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "refused");
  EXPECT_EQ(f.env.starts, 0);
  EXPECT_EQ(run->budget_tier(), "exhausted");
  // The reason that refused it is in the run's final word.
  ASSERT_EQ(run->final_reasons_size(), 1);
  EXPECT_EQ(run->final_reasons(0),
            "the error budget allows no exploration (tier exhausted): "
            "exhausted → frozen; only stable ships");
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
}

TEST(CanaryControllerTest, TheAllowanceCutsThePlan) {
  Fixture f;
  f.env.allowance.max_canary_weight = 0.1;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  ASSERT_EQ(run->plan_size(), 2);
  EXPECT_DOUBLE_EQ(run->plan(1).canary_weight(), 0.1);
  EXPECT_EQ(run->steps_size(), 2);
}

RolloutAllowance Exhausted() {
  RolloutAllowance exhausted;
  exhausted.allowed = false;
  exhausted.tier = "exhausted";
  exhausted.reasons = {"budget 0.0 % left", "exhausted → frozen"};
  return exhausted;
}

// The budget runs out while the rollout runs: it stops exploring before
// its next step, blaming nothing.
TEST(CanaryControllerTest, TheBudgetIsReadAgainBeforeEveryStep) {
  Fixture f;
  f.env.allowance_at_call[3] = Exhausted();  // before step 2
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "aborted");
  EXPECT_EQ(run->steps_size(), 1);
  EXPECT_EQ(f.env.weights, (std::vector<double>{0.05, 0}));
  EXPECT_EQ(Count(f.env.actions, "promote"), 0);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
  EXPECT_FALSE(run->has_final_reward());
  ASSERT_EQ(run->final_reasons_size(), 1);
  EXPECT_EQ(run->final_reasons(0),
            "the error budget no longer allows exploration before step 2 "
            "(tier exhausted): exhausted → frozen; stable serves");

  // A lower weight allowed mid-rollout cuts the plan at this step.
  Fixture cut;
  RolloutAllowance lower;
  lower.max_canary_weight = 0.1;
  cut.env.allowance_at_call[3] = lower;
  run = cut.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  ASSERT_EQ(run->plan_size(), 2);
  EXPECT_DOUBLE_EQ(run->plan(1).canary_weight(), 0.1);
  EXPECT_EQ(cut.env.weights, (std::vector<double>{0.05, 0.1, 0}));
  ASSERT_EQ(run->budget_reasons_size(), 1);
  EXPECT_NE(run->budget_reasons(0).find("plan cut to 2 of 3 steps"),
            std::string::npos);

  // Reached exactly, as at build: that step is the last.
  Fixture exact;
  RolloutAllowance quarter;
  quarter.max_canary_weight = 0.25;
  quarter.tier = "cautious";
  exact.env.allowance_at_call[3] = quarter;
  run = exact.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  EXPECT_EQ(run->plan_size(), 2);
  EXPECT_EQ(run->budget_tier(), "cautious");
  EXPECT_EQ(exact.env.weights, (std::vector<double>{0.05, 0.25, 0}));
}

// Resumed after the budget ran out, the rollout does not go on.
TEST(CanaryControllerTest, AResumedRolloutReadsTheBudgetAgain) {
  Fixture f;
  f.env.stop_after_collections = 1;
  auto stopped = f.Run();
  EXPECT_TRUE(absl::IsCancelled(stopped.status())) << stopped.status();
  f.env.stop_after_collections = -1;
  f.env.allowance = Exhausted();
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "aborted");
  EXPECT_EQ(Count(f.env.actions, "promote"), 0);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
  EXPECT_NE(run->final_reasons(0).find("no longer allows exploration"),
            std::string::npos)
      << run->final_reasons(0);
}

// A step ending on a window boundary waits for its last window: one that
// ends a window before the step's end is not all of it.
TEST(CanaryControllerTest, AStepWaitsForItsLastWindow) {
  Fixture f;
  f.env.collections_one_window_behind = 1;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  EXPECT_EQ(f.env.collections, 4);  // step 1 collected twice
}

// A canary that dies mid-rollout is not judged on what it answered before:
// its step fails and the candidate is blamed; another instance dying makes
// the step unjudgeable (aborted, nothing blamed).
TEST(CanaryControllerTest, AnInstanceThatEndedIsNeverJudgedOnItsPast) {
  Fixture f;
  f.env.ended_from_collection = 2;  // during step 2
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "rolled_back");
  ASSERT_EQ(run->steps_size(), 2);
  EXPECT_EQ(run->steps(1).outcome(), "Fail");
  EXPECT_NE(run->steps(1).reasons(0).find("the canary instance exited"),
            std::string::npos);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 1);
  EXPECT_TRUE(run->has_final_reward());
  EXPECT_LT(run->final_reward(), 0);

  Fixture other;
  other.env.ended_from_collection = 1;
  other.env.ended_group = "baseline";
  run = other.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "aborted");
  EXPECT_EQ(run->steps(0).outcome(), "Error");
  EXPECT_EQ(Count(other.env.actions, "mark_failed"), 0);
  EXPECT_FALSE(run->has_final_reward());
}

TEST(CanaryControllerTest, UnreadableRewardsAbortWithoutPromotionOrBlame) {
  Fixture f;
  f.env.rewards_unreachable = true;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "aborted");
  ASSERT_EQ(run->steps_size(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Error");
  EXPECT_EQ(Count(f.env.actions, "promote"), 0);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
  EXPECT_FALSE(run->has_final_reward());
  EXPECT_TRUE(run->instances().empty());
}

TEST(CanaryControllerTest, AStepWithoutWindowsYetIsExtendedNotAborted) {
  Fixture f;
  // The first step's first look (its settle retries included) finds no
  // window: a reward engine slow to start.
  f.env.collections_without_windows = 5;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "promoted");
  EXPECT_GE(run->steps(0).extensions(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Pass");
}

TEST(CanaryControllerTest, NoWindowsToTheStepsMaximumAborts) {
  Fixture f;
  f.env.collections_without_windows = -1;
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "aborted");
  ASSERT_EQ(run->steps_size(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Error");
  EXPECT_EQ(run->steps(0).extensions(), 2);
  EXPECT_EQ(Count(f.env.actions, "mark_failed"), 0);
}

TEST(CanaryControllerTest, InconclusiveStepsAreExtendedThenRolledBack) {
  Fixture f;
  f.env.evidence_only_three_windows = true;  // below min_samples 8
  auto run = f.Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "rolled_back");
  ASSERT_EQ(run->steps_size(), 1);
  EXPECT_EQ(run->steps(0).outcome(), "Inconclusive");
  EXPECT_EQ(run->steps(0).extensions(), 2);  // 20 s + 2 x 5 s = 30 s max
  EXPECT_NE(f.env.failed_reason.find("not proven safe"), std::string::npos);
}

TEST(CanaryControllerTest, AStoppedRunResumesWithoutJudgingAStepTwice) {
  Fixture f;
  // Step 1 is collected and judged, then a stop arrives during step 2.
  f.env.stop_after_collections = 2;
  auto first = f.Run();
  ASSERT_TRUE(absl::IsCancelled(first.status())) << first.status();
  auto saved = CanaryStateStore(f.dir).Load("c1");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->phase(), "starting");
  EXPECT_EQ(saved->steps_size(), 1);
  EXPECT_TRUE(saved->instances().empty());

  ScriptedEnvironment fresh;
  fresh.now = f.env.now + 60000;
  f.env = fresh;
  auto second = f.Run();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->phase(), "promoted");
  EXPECT_EQ(second->resumes(), 1);
  ASSERT_EQ(second->steps_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(second->steps(i).index(), i);
  // Resumed at step 2: weights 0.25 then 0.5, never 0.05 again.
  EXPECT_EQ(f.env.weights, (std::vector<double>{0.25, 0.5, 0}));
}

TEST(CanaryControllerTest, AKilledControllersInstancesAreStoppedFirst) {
  Fixture f;
  // A state as a controller SIGKILLed mid-step leaves it.
  v1::CanaryRun run;
  run.set_canary_id("c1");
  run.set_service("demo");
  run.set_candidate_version("cand");
  run.set_stable_version("stab");
  run.set_phase("stepping");
  run.set_current_step(1);
  for (const auto& step : ThreeSteps().steps) *run.add_plan() = step;
  auto* done = run.add_steps();
  done->set_index(0);
  done->set_outcome("Pass");
  run.add_instances()->set_pid(4242);
  ASSERT_TRUE(CanaryStateStore(f.dir).Save(run).ok());
  auto resumed = f.Run();
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_FALSE(f.env.stopped_pids.empty());
  EXPECT_EQ(f.env.stopped_pids[0], (std::vector<int>{4242}));
  EXPECT_EQ(resumed->phase(), "promoted");
  EXPECT_EQ(resumed->steps_size(), 3);
  EXPECT_EQ(f.env.starts, 1);
}

TEST(CanaryControllerTest, AFinalRunIsReturnedAsItIs) {
  Fixture f;
  ASSERT_TRUE(f.Run().ok());
  const auto actions = f.env.actions;
  auto again = f.Run();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->phase(), "promoted");
  EXPECT_EQ(f.env.actions, actions);  // nothing done twice
}

TEST(CanaryControllerTest, AnIdOfAnotherRolloutIsRefused) {
  Fixture f;
  ASSERT_TRUE(f.Run().ok());
  CanaryRequest other = Request();
  other.candidate_version = "something-else";
  auto run = f.Run(other);
  ASSERT_TRUE(absl::IsInvalidArgument(run.status())) << run.status();
  EXPECT_NE(run.status().message().find("--canary-id"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::canary
