#include "canary/controller/canary_controller.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "canary/controller/step_figures.h"

namespace phaseloop::canary {
namespace {

constexpr int64_t kCollectRetryMs = 1000;

bool IsStepPhase(const std::string& phase) {
  return phase == "starting" || phase == "stepping";
}

v1::CanaryMetricResult MetricResult(const MetricJudgement& metric) {
  v1::CanaryMetricResult result;
  result.set_name(metric.name);
  result.set_outcome(OutcomeName(metric.outcome));
  result.set_reason(metric.reason);
  result.set_baseline_count(metric.baseline.count);
  result.set_canary_count(metric.canary.count);
  result.set_baseline_median(metric.baseline.median);
  result.set_canary_median(metric.canary.median);
  result.set_ratio(metric.ratio.value_or(0));
  result.set_p_value(metric.p_value.value_or(0));
  result.set_test(metric.test);
  result.set_baseline_at_percentile(metric.baseline.percentile);
  result.set_canary_at_percentile(metric.canary.percentile);
  return result;
}

// The error budget's rule for a plan, from step `from` on: the first step
// whose weight reaches `max_weight` runs at it and is the last. Returns how
// many steps the plan had.
int CutPlan(v1::CanaryRun& run, int from, double max_weight) {
  const int planned = run.plan_size();
  for (int i = from; i < run.plan_size(); ++i) {
    v1::CanaryStepPlan& step = *run.mutable_plan(i);
    if (step.canary_weight() < max_weight) continue;
    step.set_canary_weight(max_weight);
    while (run.plan_size() > i + 1) run.mutable_plan()->RemoveLast();
    break;
  }
  return planned;
}

}  // namespace

CanaryController::CanaryController(CanaryStateStore store, RolloutConfig config,
                                   RolloutEnvironment* environment)
    : store_(std::move(store)), config_(std::move(config)), env_(environment) {}

absl::Status CanaryController::Save(v1::CanaryRun& run) {
  run.set_updated_ms(env_->NowMs());
  if (auto s = store_.Save(run); !s.ok()) return s;
  env_->StateSaved(run);
  return absl::OkStatus();
}

absl::Status CanaryController::Enter(v1::CanaryRun& run,
                                     const std::string& phase) {
  run.set_phase(phase);
  if (IsFinalPhase(phase)) run.set_ended_ms(env_->NowMs());
  return Save(run);
}

absl::StatusOr<v1::CanaryRun> CanaryController::Run(
    const CanaryRequest& request) {
  if (auto s = CheckCanaryId(request.canary_id); !s.ok()) return s;
  v1::CanaryRun run;
  auto loaded = store_.Load(request.canary_id);
  if (loaded.ok()) {
    run = *std::move(loaded);
    if (run.service() != request.service ||
        run.candidate_version() != request.candidate_version) {
      return absl::InvalidArgumentError(absl::StrCat(
          "canary id '", request.canary_id, "' already names a rollout of ",
          run.candidate_version(), " on ", run.service(), " (",
          store_.StatePath(request.canary_id),
          "); give this rollout its own --canary-id"));
    }
    if (IsFinalPhase(run.phase())) return run;
    if (run.phase() != "created") {
      run.set_resumes(run.resumes() + 1);
      env_->Progress(absl::StrCat("resuming canary ", run.canary_id(),
                                  " in phase ", run.phase()));
      if (auto s = env_->StopInstances(run); !s.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot stop the instances a previous controller left running (",
            s.message(), "); stop them by hand, then run again"));
      }
      run.clear_instances();
      if (IsStepPhase(run.phase())) run.set_phase("starting");
      if (auto s = Save(run); !s.ok()) return s;
    }
  } else if (absl::IsNotFound(loaded.status())) {
    run.set_canary_id(request.canary_id);
    run.set_service(request.service);
    run.set_candidate_version(request.candidate_version);
    run.set_stable_version(request.stable_version);
    run.set_phase("created");
    for (const auto& step : config_.steps) *run.add_plan() = step;
    run.set_stable_deployment_id(absl::StrCat(request.canary_id, "-stable"));
    run.set_baseline_deployment_id(
        absl::StrCat(request.canary_id, "-baseline"));
    run.set_canary_deployment_id(absl::StrCat(request.canary_id, "-canary"));
    run.set_created_ms(env_->NowMs());
    if (auto s = files::CheckStartsInUtf8(run, CanaryStateKind()); !s.ok()) {
      return s;
    }
    if (auto s = Save(run); !s.ok()) return s;
  } else {
    return loaded.status();
  }

  while (!IsFinalPhase(run.phase())) {
    const std::string& phase = run.phase();
    const bool interruptible =
        phase == "created" || phase == "building" || IsStepPhase(phase);
    if (interruptible && env_->StopRequested()) {
      (void)env_->StopInstances(run);
      run.clear_instances();
      if (IsStepPhase(run.phase())) run.set_phase("starting");
      if (auto s = Save(run); !s.ok()) return s;
      return absl::CancelledError(absl::StrCat(
          "canary ", run.canary_id(), " stopped in phase ", run.phase(),
          "; run the same command again to resume it"));
    }
    absl::Status status;
    if (phase == "created" || phase == "building") {
      status = Build(run);
    } else if (phase == "starting") {
      status = Start(run);
    } else if (phase == "stepping") {
      status = Step(run);
    } else {
      status = Finish(run);
    }
    if (!status.ok()) return status;
  }
  return run;
}

absl::Status CanaryController::Build(v1::CanaryRun& run) {
  if (auto s = Enter(run, "building"); !s.ok()) return s;
  env_->Progress(absl::StrCat(
      "building ",
      run.stable_version().empty() ? std::string("plain -O3")
                                   : run.stable_version(),
      " and ", run.candidate_version(), ", checking their outputs"));
  auto builds = env_->BuildAndCheck(run);
  if (!builds.ok()) {
    if (absl::IsFailedPrecondition(builds.status())) {
      run.add_final_reasons(absl::StrCat(
          "the candidate's outputs differ from stable's, it never took "
          "traffic: ",
          builds.status().message()));
      return Enter(run, "rolling_back");
    }
    run.add_final_reasons(
        absl::StrCat("build failed: ", builds.status().message()));
    return Enter(run, "aborting");
  }
  run.set_baseline_build_id(builds->baseline_build_id);
  run.set_candidate_build_id(builds->candidate_build_id);

  auto allowance = env_->Allowance(run);
  if (!allowance.ok()) {
    run.add_final_reasons(absl::StrCat("the error budget could not be read: ",
                                       allowance.status().message()));
    return Enter(run, "aborting");
  }
  run.set_budget_tier(allowance->tier);
  if (allowance->budget_remaining) {
    run.set_budget_remaining_at_start(*allowance->budget_remaining);
  }
  run.clear_budget_reasons();
  for (const auto& reason : allowance->reasons) run.add_budget_reasons(reason);
  if (!allowance->allowed) {
    // The rule's last reason is the one that refused (exploration_allowance.h).
    run.add_final_reasons(absl::StrCat(
        "the error budget allows no exploration (tier ", allowance->tier,
        allowance->reasons.empty() ? ")" : "): " + allowance->reasons.back(),
        "; only stable ships"));
    return Enter(run, "refused");
  }
  const int planned = CutPlan(run, 0, allowance->max_canary_weight);
  if (run.plan_size() < planned) {
    run.add_budget_reasons(absl::StrFormat(
        "plan cut to %d of %d steps (canary weight at most %.3f)",
        run.plan_size(), planned, allowance->max_canary_weight));
  }
  for (int i = 0; i < run.plan_size(); ++i) {
    run.mutable_plan(i)->set_index(i);
  }
  return Enter(run, "starting");
}

absl::Status CanaryController::Start(v1::CanaryRun& run) {
  env_->Progress("starting stable, baseline and canary instances");
  if (auto s = env_->StartInstances(&run); !s.ok()) {
    // Whatever started is recorded; stop it before deciding.
    (void)env_->StopInstances(run);
    run.clear_instances();
    run.add_final_reasons(
        absl::StrCat("the instances could not be started: ", s.message()));
    return Enter(run, "aborting");
  }
  run.set_current_step(run.steps_size());
  return Enter(run, "stepping");
}

v1::CanaryStepResult CanaryController::JudgeStep(
    const v1::CanaryRun& run, const v1::CanaryStepPlan& plan,
    int64_t started_ms, int64_t to_ms, const StepEvidence& evidence,
    int extensions, bool last_look) const {
  // The last look of a step: no extension can add data, so an unproven rise
  // passes when the rollout says so (RolloutConfig::pass_unproven_at_max).
  JudgeConfig judge = config_.judge;
  if (last_look && config_.pass_unproven_at_max) {
    judge.unproven_change = UnprovenChange::kPass;
  }
  const Judgement judgement = Judge(evidence.metrics, judge);
  v1::CanaryStepResult result;
  result.set_index(plan.index());
  result.set_canary_weight(plan.canary_weight());
  result.set_started_ms(started_ms);
  result.set_judged_from_ms(started_ms + plan.warmup_ms());
  result.set_judged_to_ms(to_ms);
  result.set_outcome(OutcomeName(judgement.outcome));
  result.set_score(judgement.score);
  for (const auto& reason : judgement.reasons) result.add_reasons(reason);
  for (const auto& metric : judgement.metrics) {
    v1::CanaryMetricResult& added = *result.add_metrics();
    added = MetricResult(metric);
    added.set_percentile(config_.judge.RuleFor(metric.name).percentile);
  }
  if (evidence.windows_without_sketch > 0) {
    result.set_windows_without_sketch(evidence.windows_without_sketch);
    result.add_reasons(absl::StrFormat(
        "%d reward window(s) carried no usable latency sketch: their requests "
        "are not in latency_ms (is the reward engine older than the "
        "controller?)",
        evidence.windows_without_sketch));
  }
  result.set_baseline_windows(evidence.baseline_windows);
  result.set_canary_windows(evidence.canary_windows);
  result.set_relative_reward(evidence.relative_reward);
  for (double v : evidence.baseline_window_p95_ms) {
    result.add_baseline_p95_ms(v);
  }
  for (double v : evidence.canary_window_p95_ms) result.add_canary_p95_ms(v);
  result.set_decided_ms(env_->NowMs());
  result.set_extensions(extensions);
  return result;
}

absl::Status CanaryController::Step(v1::CanaryRun& run) {
  const int index = run.current_step();
  if (index >= run.plan_size()) {
    run.set_has_final_reward(true);
    run.set_final_reward(FinalReward(run, /*promoted=*/true));
    return Enter(run, "promoting");
  }
  if (auto s = CheckBudgetBeforeStep(run);
      !s.ok() || run.phase() != "stepping") {
    return s;
  }
  const v1::CanaryStepPlan& plan = run.plan(index);
  if (auto s = env_->SetCanaryWeight(plan.canary_weight()); !s.ok()) {
    run.add_final_reasons(
        absl::StrCat("traffic could not be shifted: ", s.message()));
    return Enter(run, "aborting");
  }
  const int64_t started = env_->NowMs();
  run.set_step_started_ms(started);
  if (auto s = Save(run); !s.ok()) return s;
  env_->Progress(absl::StrFormat("step %d/%d: canary %.0f %% of traffic",
                                 index + 1, run.plan_size(),
                                 100 * plan.canary_weight()));
  const int64_t from = started + plan.warmup_ms();
  int64_t end = started + plan.duration_ms();
  int extensions = 0;
  v1::CanaryStepResult result;
  while (true) {
    env_->SleepUntilMs(end);
    if (env_->StopRequested()) return absl::OkStatus();  // Run() stops
    // The reward engine closes a window some time after its end: wait for
    // both sides to reach the step's end, or until they should have.
    const int64_t settle_deadline = end + env_->WindowSettleMs();
    absl::StatusOr<StepEvidence> evidence;
    while (true) {
      evidence = env_->CollectStep(run, from, end);
      // The step judges the windows wholly inside it: the last one ends at
      // the last multiple of the window length not after `end`.
      const int64_t window = env_->RewardWindowMs();
      const int64_t last_end = end - ((end % window) + window) % window;
      const bool settled =
          evidence.ok() && std::min(evidence->baseline_newest_end_ms,
                                    evidence->canary_newest_end_ms) >= last_end;
      if (settled || env_->NowMs() >= settle_deadline ||
          env_->StopRequested()) {
        break;
      }
      env_->SleepUntilMs(env_->NowMs() + kCollectRetryMs);
    }
    if (env_->StopRequested()) return absl::OkStatus();
    // An instance that died is never judged on what it answered before: a
    // canary that ended (crashed or killed) fails its step and is blamed;
    // any other ended instance makes the step unjudgeable.
    if (const std::vector<std::string> ended = env_->EndedInstances(run);
        !ended.empty()) {
      const bool canary =
          std::find(ended.begin(), ended.end(), "canary") != ended.end();
      result = JudgeStep(run, plan, started, end,
                         evidence.ok() ? *evidence : StepEvidence{}, extensions,
                         /*last_look=*/true);
      result.set_outcome(
          OutcomeName(canary ? Outcome::kFail : Outcome::kError));
      result.clear_reasons();
      result.add_reasons(
          canary ? std::string("the canary instance exited during the step "
                               "(the candidate crashed or was killed)")
                 : absl::StrCat("the ", absl::StrJoin(ended, ", "),
                                " instance exited during the step: it "
                                "cannot be judged"));
      break;
    }
    if (!evidence.ok()) {
      result = JudgeStep(run, plan, started, end, StepEvidence{}, extensions,
                         /*last_look=*/true);
      result.set_outcome(OutcomeName(Outcome::kError));
      result.clear_reasons();
      result.add_reasons(absl::StrCat("the reward windows could not be read: ",
                                      evidence.status().message()));
      break;
    }
    const int64_t next_end =
        end + static_cast<int64_t>(config_.extension_s * 1000);
    const bool last_look = next_end > started + plan.max_duration_ms();
    result =
        JudgeStep(run, plan, started, end, *evidence, extensions, last_look);
    // No window yet on a side (a reward engine just restarted on a busy
    // machine is slow to its first one) is waited for like too little data;
    // still none at the step's maximum is the Error that aborts.
    const bool no_windows =
        result.outcome() == OutcomeName(Outcome::kError) &&
        (result.baseline_windows() == 0 || result.canary_windows() == 0);
    if ((result.outcome() == OutcomeName(Outcome::kInconclusive) ||
         no_windows) &&
        !last_look) {
      ++extensions;
      env_->Progress(
          absl::StrCat("step ", index + 1,
                       no_windows ? " has no windows yet (" : " inconclusive (",
                       absl::StrJoin(result.reasons(), "; "), "): extended"));
      end = next_end;
      continue;
    }
    break;
  }
  *run.add_steps() = result;
  run.set_current_step(index + 1);
  env_->Progress(absl::StrFormat(
      "step %d/%d: %s (score %.0f, %d/%d windows, relative reward %+.4f)",
      index + 1, run.plan_size(), result.outcome(), result.score(),
      result.baseline_windows(), result.canary_windows(),
      result.relative_reward()));
  const std::string& outcome = result.outcome();
  if (outcome == OutcomeName(Outcome::kPass)) return Save(run);
  for (const auto& reason : result.reasons()) {
    run.add_final_reasons(absl::StrCat("step ", index + 1, ": ", reason));
  }
  if (outcome == OutcomeName(Outcome::kError)) return Enter(run, "aborting");
  if (outcome == OutcomeName(Outcome::kInconclusive)) {
    run.add_final_reasons(absl::StrCat(
        "step ", index + 1,
        " stayed inconclusive to its maximum duration: not proven safe"));
  }
  run.set_has_final_reward(true);
  run.set_final_reward(FinalReward(run, /*promoted=*/false));
  return Enter(run, "rolling_back");
}

absl::Status CanaryController::CheckBudgetBeforeStep(v1::CanaryRun& run) {
  const int index = run.current_step();
  auto allowance = env_->Allowance(run);
  if (!allowance.ok()) {
    run.add_final_reasons(
        absl::StrCat("the error budget could not be read before step ",
                     index + 1, ": ", allowance.status().message()));
    return Enter(run, "aborting");
  }
  if (!allowance->allowed) {
    run.add_final_reasons(absl::StrCat(
        "the error budget no longer allows exploration before step ", index + 1,
        " (tier ", allowance->tier,
        allowance->reasons.empty() ? ")" : "): " + allowance->reasons.back(),
        "; stable serves"));
    return Enter(run, "aborting");
  }
  // As Build cuts the plan: the first step that reaches the weight allowed
  // now runs at it, and is the last.
  const double weight = run.plan(index).canary_weight();
  if (weight < allowance->max_canary_weight ||
      (weight == allowance->max_canary_weight &&
       run.plan_size() == index + 1)) {
    return absl::OkStatus();  // nothing to change
  }
  const int planned = CutPlan(run, index, allowance->max_canary_weight);
  run.set_budget_tier(allowance->tier);
  run.add_budget_reasons(absl::StrFormat(
      "before step %d: tier %s allows a canary weight of at most %.3f "
      "(planned %.3f); plan cut to %d of %d steps",
      index + 1, allowance->tier, allowance->max_canary_weight, weight,
      run.plan_size(), planned));
  return Save(run);
}

double CanaryController::FinalReward(const v1::CanaryRun& run,
                                     bool promoted) const {
  const double measured = MeasuredRelativeReward(run);
  return promoted ? std::max(measured, 0.0) + config_.pass_bonus
                  : std::min(measured, 0.0) - config_.fail_penalty;
}

absl::Status CanaryController::Finish(v1::CanaryRun& run) {
  const std::string phase = run.phase();
  if (auto allowance = env_->Allowance(run);
      allowance.ok() && allowance->budget_remaining) {
    run.set_budget_remaining_at_end(*allowance->budget_remaining);
  }
  if (phase == "promoting") {
    if (auto s = env_->Promote(run); !s.ok()) {
      run.add_final_reasons(absl::StrCat("promotion failed: ", s.message()));
      run.set_has_final_reward(false);
      return Enter(run, "aborting");
    }
    if (auto s = env_->RecordOutcome(run); !s.ok()) return s;
    (void)env_->SetCanaryWeight(0);
    if (auto s = env_->StopInstances(run); !s.ok()) return s;
    run.clear_instances();
    run.add_final_reasons(absl::StrCat(run.candidate_version(),
                                       " passed every step: now stable"));
    env_->Progress(run.final_reasons(run.final_reasons_size() - 1));
    return Enter(run, "promoted");
  }
  // rolling_back or aborting: traffic back on stable first.
  (void)env_->SetCanaryWeight(0);
  if (auto s = env_->StopInstances(run); !s.ok()) return s;
  run.clear_instances();
  if (phase == "rolling_back") {
    const std::string reason = run.final_reasons_size() > 0
                                   ? absl::StrJoin(run.final_reasons(), "; ")
                                   : std::string("rolled back");
    if (auto s = env_->MarkFailed(run, reason); !s.ok()) return s;
    if (auto s = env_->RecordOutcome(run); !s.ok()) return s;
    env_->Progress(absl::StrCat("rolled back: ", reason));
    return Enter(run, "rolled_back");
  }
  env_->Progress(
      absl::StrCat("aborted: ", absl::StrJoin(run.final_reasons(), "; ")));
  return Enter(run, "aborted");
}

}  // namespace phaseloop::canary
